// Command jwtmix writes the requests of make bench's JWT class read: class reads, each with
// the JWT of a signed-in student, for wrk (scripts/bench/paths.lua).
//
//	jwtmix -out FILE [-n 2000] [-base /api/v2]
//
// It draws n registrations of students in public classes (a fixed pseudo-random sample, the
// same on every run) and writes two requests for each: the student reading the class it is
// registered in (registration_id is then set) and the same student reading the class of the
// next registration drawn (usually another student's class: registration_id null). Each line
// is "PATH<TAB>JWT". The JWTs are HS256, signed with edge.jwt.hmac_secret, subject the
// student, valid for a day; the first line is always a registered pair, for bench.sh's check.
//
// The database and the secret come from the usual configuration (CATALOGUE_DATABASE_URL,
// CATALOGUE_EDGE_JWT_HMAC_SECRET).
package main

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/config"
)

//go:embed pairs.sql
var pairsSQL string

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "jwtmix:", err)
		os.Exit(1)
	}
}

// pair is one registration drawn: a student and the class it is registered in.
type pair struct {
	student string
	class   int64
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("jwtmix", flag.ContinueOnError)
	out := fs.String("out", "", "file to write the requests to")
	n := fs.Int("n", 2000, "registrations drawn (two requests each)")
	base := fs.String("base", "/api/v2", "base path the edge serves under")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *n < 1 {
		return errors.New("-out is required and -n is at least 1")
	}
	cfg, err := config.Load("", nil)
	if err != nil {
		return err
	}
	if cfg.Edge.JWT.HMACSecret == "" {
		return errors.New("CATALOGUE_EDGE_JWT_HMAC_SECRET is not set")
	}
	conn, err := pgx.Connect(ctx, cfg.ReplicaURL())
	if err != nil {
		return fmt.Errorf("connect to the database: %w", err)
	}
	defer conn.Close(ctx)
	rows, _ := conn.Query(ctx, pairsSQL, *n)
	pairs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pair, error) {
		var p pair
		return p, r.Scan(&p.student, &p.class)
	})
	if err != nil {
		return fmt.Errorf("draw registrations: %w", err)
	}
	if len(pairs) == 0 {
		return errors.New("no registration of a student in a public class: is the database seeded?")
	}
	return write(*out, *base, []byte(cfg.Edge.JWT.HMACSecret), pairs)
}

// write writes two requests per pair, each student's JWT signed once.
func write(path, base string, secret []byte, pairs []pair) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	exp := time.Now().Add(12 * time.Hour).Unix() // within edge.jwt.max_lifetime (24h)
	for i, p := range pairs {
		token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": p.student, "exp": exp}).SignedString(secret)
		if err != nil {
			f.Close()
			return fmt.Errorf("sign a JWT: %w", err)
		}
		other := pairs[(i+1)%len(pairs)].class
		fmt.Fprintf(w, "%s/public/class/%d\t%s\n%s/public/class/%d\t%s\n", base, p.class, token, base, other, token)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
