package snapshot

// Edges that share a Redis (edge.redis_url) report there the snapshot each serves, so that
// builder serve sends a webhook only once every edge serves the snapshot it announces
// (D42). Each edge writes its own key, EdgeServedPrefix of its store and an id of its own,
// holding the snapshot id, with a time to live of EdgeServedTTL seconds that it renews
// every second: the key of an edge that stopped expires, and it holds no delivery back.
const EdgeServedTTL = 5

// EdgeServedPrefix is the prefix of the keys of the edges serving the store at storeURL
// (store.url) through endpoint (store.endpoint): installations sharing a Redis never wait
// for each other's edges.
func EdgeServedPrefix(storeURL, endpoint string) string {
	return "catalogue:edge-served:" + Hash([]byte(storeURL + "\n" + endpoint))[:12] + ":"
}
