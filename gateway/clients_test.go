package gateway

import (
	"net"
	"testing"

	"github.com/rockstream/rockstream/gateway/gatewaytest"
)

// TestClients runs the real-client matrix (package gatewaytest) through the
// gateway with the protocol-test engine.
func TestClients(t *testing.T) {
	host, port, _ := net.SplitHostPort(testAddr)
	gatewaytest.RunClients(t, gatewaytest.Server{Host: host, Port: port, User: "postgres", Database: "postgres"})
}
