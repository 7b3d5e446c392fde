package faults

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// tcpProxy forwards TCP connections on 127.0.0.1 to a server until it is cut: refuse closes
// its port (a server that is down), blackhole keeps the port open but answers nothing (a
// server that hangs, or a network that drops packets). restore forwards again on the same
// port. Cutting also drops every connection open through it.
type tcpProxy struct {
	addr, target string

	mu    sync.Mutex
	ln    net.Listener // nil while refusing
	hang  bool
	conns map[net.Conn]bool
}

// newTCPProxy starts a proxy to target (host:port) on a free port of 127.0.0.1. It is
// closed when the test ends.
func newTCPProxy(t testing.TB, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]bool{}}
	go p.serve(ln)
	t.Cleanup(p.refuse)
	return p
}

// proxyDatabase starts a proxy to the server of the PostgreSQL URL dbURL and returns it with
// dbURL rewritten to go through it.
func proxyDatabase(t testing.TB, dbURL string) (*tcpProxy, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	p := newTCPProxy(t, u.Host)
	u.Host = p.addr
	return p, u.String()
}

func (p *tcpProxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return // refused or closed
		}
		p.mu.Lock()
		p.conns[c] = true
		hang := p.hang
		p.mu.Unlock()
		if !hang {
			go p.forward(c)
		}
	}
}

// forward copies between c and a new connection to the target until either side closes.
func (p *tcpProxy) forward(c net.Conn) {
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		p.drop(c)
		return
	}
	p.mu.Lock()
	p.conns[up] = true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); p.drop(up) }()
	_, _ = io.Copy(c, up)
	p.drop(c)
}

func (p *tcpProxy) drop(c net.Conn) {
	c.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}

// dropAll closes every open connection; p.mu is held.
func (p *tcpProxy) dropAll() {
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// refuse closes the port and every connection: new connections are refused.
func (p *tcpProxy) refuse() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	p.dropAll()
}

// blackhole drops every connection and holds new ones open without a word.
func (p *tcpProxy) blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hang = true
	p.dropAll()
}

// restore forwards again, on the same port.
func (p *tcpProxy) restore(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hang = false
	p.dropAll() // the held connections of a blackhole would never answer
	if p.ln == nil {
		ln, err := net.Listen("tcp", p.addr)
		if err != nil {
			t.Fatalf("proxy: listen again on %s: %v", p.addr, err)
		}
		p.ln = ln
		go p.serve(ln)
	}
}
