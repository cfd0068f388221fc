package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/errcode"
)

// Password authentication: SCRAM-SHA-256 (RFC 5802/7677, as PostgreSQL
// implements it) against stored verifiers and, on TLS connections only,
// cleartext checked against the same verifiers. The server never holds a
// password: a role's verifier has the salt, the iteration count and the
// StoredKey and ServerKey derived from it, exactly what PostgreSQL keeps in
// pg_authid.rolpassword.

// scramIterations is PostgreSQL's default scram_iterations.
const scramIterations = 4096

// scramSaltBytes is the salt length PostgreSQL generates (SCRAM_DEFAULT_SALT_LEN).
const scramSaltBytes = 16

// scramPrefix starts a verifier's text form.
const scramPrefix = "SCRAM-SHA-256$"

// Role is what the gateway needs to know about a user to authenticate it
// and to apply the reserved connection slots.
type Role struct {
	// Verifier is the role's SCRAM-SHA-256 verifier in PostgreSQL's text
	// form ("" when the role has no password: it cannot log in with
	// password authentication, as in PostgreSQL).
	Verifier string
	// Superuser is the role's SUPERUSER attribute.
	Superuser bool
	// Login is the role's LOGIN attribute.
	Login bool
}

// RoleSource looks roles up by name for authentication (the engine's
// catalog). found is false for a name that is no role.
type RoleSource interface {
	LookupRole(ctx context.Context, name string) (role Role, found bool, err error)
}

// SCRAMVerifier is a parsed SCRAM-SHA-256 verifier.
type SCRAMVerifier struct {
	Iterations           int
	Salt                 []byte
	StoredKey, ServerKey []byte
}

// String is PostgreSQL's text form:
// SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>, base64.
func (v SCRAMVerifier) String() string {
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("%s%d:%s$%s:%s", scramPrefix, v.Iterations, b64(v.Salt), b64(v.StoredKey), b64(v.ServerKey))
}

// NewSCRAMVerifier derives a verifier from a password with a fresh random
// salt and PostgreSQL's default iteration count.
func NewSCRAMVerifier(password string) (SCRAMVerifier, error) {
	salt := make([]byte, scramSaltBytes)
	if _, err := rand.Read(salt); err != nil {
		return SCRAMVerifier{}, err
	}
	storedKey, serverKey := scramKeys(password, salt, scramIterations)
	return SCRAMVerifier{Iterations: scramIterations, Salt: salt, StoredKey: storedKey, ServerKey: serverKey}, nil
}

// LooksLikeSCRAMVerifier reports whether a PASSWORD string is already a
// verifier (PostgreSQL stores such a string as it is instead of hashing it).
func LooksLikeSCRAMVerifier(s string) bool {
	_, err := ParseSCRAMVerifier(s)
	return err == nil
}

// ParseSCRAMVerifier reads PostgreSQL's text form of a verifier.
func ParseSCRAMVerifier(s string) (SCRAMVerifier, error) {
	bad := func(why string) (SCRAMVerifier, error) {
		return SCRAMVerifier{}, fmt.Errorf("malformed SCRAM-SHA-256 verifier: %s", why)
	}
	rest, ok := strings.CutPrefix(s, scramPrefix)
	if !ok {
		return bad("no SCRAM-SHA-256$ prefix")
	}
	head, keys, ok := strings.Cut(rest, "$")
	if !ok {
		return bad("no $ before the keys")
	}
	iterText, saltText, ok := strings.Cut(head, ":")
	if !ok {
		return bad("no iteration count")
	}
	iterations, err := strconv.Atoi(iterText)
	if err != nil || iterations <= 0 {
		return bad("iteration count")
	}
	storedText, serverText, ok := strings.Cut(keys, ":")
	if !ok {
		return bad("no server key")
	}
	var v SCRAMVerifier
	v.Iterations = iterations
	if v.Salt, err = base64.StdEncoding.DecodeString(saltText); err != nil || len(v.Salt) == 0 {
		return bad("salt")
	}
	if v.StoredKey, err = base64.StdEncoding.DecodeString(storedText); err != nil || len(v.StoredKey) != sha256.Size {
		return bad("stored key")
	}
	if v.ServerKey, err = base64.StdEncoding.DecodeString(serverText); err != nil || len(v.ServerKey) != sha256.Size {
		return bad("server key")
	}
	return v, nil
}

// usersSource serves Options.Users (a fixed name → password map) as roles:
// each password becomes a verifier once, when the server is made, so that
// authentication costs the same for known and unknown users.
type usersSource map[string]Role

func newUsersSource(users map[string]string) (usersSource, error) {
	out := usersSource{}
	for name, password := range users { //lint:maprange building a map; order cannot leak
		v, err := NewSCRAMVerifier(password)
		if err != nil {
			return nil, err
		}
		out[name] = Role{Verifier: v.String(), Superuser: true, Login: true}
	}
	return out, nil
}

// LookupRole implements RoleSource.
func (u usersSource) LookupRole(_ context.Context, name string) (Role, bool, error) {
	r, ok := u[name]
	return r, ok, nil
}

// authenticate runs password authentication for user and returns the role
// it authenticated as; an *errcode.Error (28P01, 28000) when the client
// fails it.
func (c *conn) authenticate(ctx context.Context, user string) (Role, error) {
	role, known, err := c.srv.roles.LookupRole(ctx, user)
	if err != nil {
		return Role{}, err
	}
	verifier, err := ParseSCRAMVerifier(role.Verifier)
	if !known || err != nil {
		// An unknown user, or a role without a usable password, runs the
		// same exchange against a mock verifier so that neither timing
		// nor messages reveal which roles exist (PostgreSQL's
		// scram_mock_salt).
		known = false
		verifier = c.srv.mockVerifier(user)
	}
	if c.isTLS && c.srv.opts.AllowCleartextOverTLS {
		err = c.authCleartext(user, verifier, known)
	} else {
		err = c.authSCRAM(user, verifier, known)
	}
	if err != nil {
		return Role{}, err
	}
	if !role.Login {
		return Role{}, errcode.New(errcode.LoginNotPermitted, "role %q is not permitted to log in", user)
	}
	return role, nil
}

// mockVerifier is a stable fake verifier for a user name: the same salt
// every time for the same name (so retries cannot tell a mock from a real
// role), keyed by a per-server secret.
func (s *Server) mockVerifier(user string) SCRAMVerifier {
	h := hmacSHA256(s.mockSecret[:], []byte("salt:"+user))
	k := hmacSHA256(s.mockSecret[:], []byte("keys:"+user))
	return SCRAMVerifier{Iterations: scramIterations, Salt: h[:scramSaltBytes], StoredKey: k, ServerKey: k}
}

func (c *conn) authFailed(user string) error {
	return errcode.New(errcode.AuthFailed, "password authentication failed for user %q", user)
}

func (c *conn) authCleartext(user string, v SCRAMVerifier, known bool) error {
	if !c.isTLS {
		return errcode.New(errcode.AuthCleartextNeedsTLS, "cleartext password authentication requires TLS")
	}
	c.backend.Send(&pgproto3.AuthenticationCleartextPassword{})
	if err := c.backend.Flush(); err != nil {
		return err
	}
	if err := c.backend.SetAuthType(pgproto3.AuthTypeCleartextPassword); err != nil {
		return err
	}
	msg, err := c.backend.Receive()
	if err != nil {
		return err
	}
	pm, ok := msg.(*pgproto3.PasswordMessage)
	if !ok {
		return errcode.New(errcode.ProtocolViolation, "expected a password message, got %T", msg)
	}
	// The key derivation runs for unknown users too (timing).
	storedKey, _ := scramKeys(pm.Password, v.Salt, v.Iterations)
	if subtle.ConstantTimeCompare(storedKey, v.StoredKey) != 1 || !known {
		return c.authFailed(user)
	}
	return nil
}

// scramKeys derives the stored and server keys from a password and salt.
func scramKeys(password string, salt []byte, iterations int) (storedKey, serverKey []byte) {
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	if err != nil {
		panic(fmt.Sprintf("gateway: pbkdf2: %v", err))
	}
	clientKey := hmacSHA256(salted, []byte("Client Key"))
	sk := sha256.Sum256(clientKey)
	return sk[:], hmacSHA256(salted, []byte("Server Key"))
}

func hmacSHA256(key, data []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(data)
	return h.Sum(nil)
}

func (c *conn) authSCRAM(user string, v SCRAMVerifier, known bool) error {
	c.backend.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{"SCRAM-SHA-256"}})
	if err := c.backend.Flush(); err != nil {
		return err
	}
	if err := c.backend.SetAuthType(pgproto3.AuthTypeSASL); err != nil {
		return err
	}
	msg, err := c.backend.Receive()
	if err != nil {
		return err
	}
	initial, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok || initial.AuthMechanism != "SCRAM-SHA-256" {
		return errcode.New(errcode.ProtocolViolation, "expected a SCRAM-SHA-256 SASLInitialResponse")
	}
	clientFirst := string(initial.Data)
	// client-first-message = gs2-header client-first-message-bare, where
	// gs2-header is "n,," or "y,," (no channel binding; we do not offer
	// SCRAM-SHA-256-PLUS).
	parts := strings.SplitN(clientFirst, ",", 3)
	if len(parts) != 3 || (parts[0] != "n" && parts[0] != "y") {
		return errcode.New(errcode.ProtocolViolation, "malformed SCRAM client-first-message")
	}
	gs2Header := parts[0] + "," + parts[1] + ","
	clientFirstBare := parts[2]
	clientNonce := ""
	for _, attr := range strings.Split(clientFirstBare, ",") {
		if strings.HasPrefix(attr, "r=") {
			clientNonce = attr[2:]
		}
	}
	if clientNonce == "" {
		return errcode.New(errcode.ProtocolViolation, "SCRAM client-first-message without a nonce")
	}
	var random [18]byte
	if _, err := rand.Read(random[:]); err != nil {
		return err
	}
	serverNonce := clientNonce + base64.StdEncoding.EncodeToString(random[:])
	serverFirst := fmt.Sprintf("r=%s,s=%s,i=%d", serverNonce, base64.StdEncoding.EncodeToString(v.Salt), v.Iterations)
	c.backend.Send(&pgproto3.AuthenticationSASLContinue{Data: []byte(serverFirst)})
	if err := c.backend.Flush(); err != nil {
		return err
	}
	if err := c.backend.SetAuthType(pgproto3.AuthTypeSASLContinue); err != nil {
		return err
	}
	msg, err = c.backend.Receive()
	if err != nil {
		return err
	}
	resp, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		return errcode.New(errcode.ProtocolViolation, "expected a SASLResponse")
	}
	clientFinal := string(resp.Data)
	idx := strings.LastIndex(clientFinal, ",p=")
	if idx < 0 {
		return errcode.New(errcode.ProtocolViolation, "malformed SCRAM client-final-message")
	}
	clientFinalWithoutProof := clientFinal[:idx]
	proof, err := base64.StdEncoding.DecodeString(clientFinal[idx+3:])
	if err != nil || len(proof) != sha256.Size {
		return c.authFailed(user)
	}
	var gotNonce, gotBinding string
	for _, attr := range strings.Split(clientFinalWithoutProof, ",") {
		switch {
		case strings.HasPrefix(attr, "r="):
			gotNonce = attr[2:]
		case strings.HasPrefix(attr, "c="):
			gotBinding = attr[2:]
		}
	}
	if gotNonce != serverNonce || gotBinding != base64.StdEncoding.EncodeToString([]byte(gs2Header)) {
		return c.authFailed(user)
	}
	// An unknown user runs the same computation against its mock
	// verifier, so timing does not reveal which users exist.
	authMessage := clientFirstBare + "," + serverFirst + "," + clientFinalWithoutProof
	clientSignature := hmacSHA256(v.StoredKey, []byte(authMessage))
	clientKey := make([]byte, len(proof))
	for i := range proof {
		clientKey[i] = proof[i] ^ clientSignature[i]
	}
	computed := sha256.Sum256(clientKey)
	if subtle.ConstantTimeCompare(computed[:], v.StoredKey) != 1 || !known {
		return c.authFailed(user)
	}
	serverSignature := hmacSHA256(v.ServerKey, []byte(authMessage))
	c.backend.Send(&pgproto3.AuthenticationSASLFinal{Data: []byte("v=" + base64.StdEncoding.EncodeToString(serverSignature))})
	return nil
}

// reservedSlotsFull reports whether a non-superuser must be refused
// because only the reserved superuser slots are left. Called with s.mu
// held, from register.
func (s *Server) reservedSlotsFull(superuser bool) bool {
	if superuser || s.opts.SuperuserReservedConnections <= 0 {
		return false
	}
	return s.opts.MaxConnections-len(s.conns) <= s.opts.SuperuserReservedConnections
}

// VerifyPassword checks a cleartext password against a verifier (HTTP
// basic authentication of /metrics uses it; pgwire uses SCRAM).
func VerifyPassword(verifier, password string) bool {
	v, err := ParseSCRAMVerifier(verifier)
	if err != nil {
		return false
	}
	storedKey, _ := scramKeys(password, v.Salt, v.Iterations)
	return subtle.ConstantTimeCompare(storedKey, v.StoredKey) == 1
}
