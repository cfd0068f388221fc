package gateway

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/errcode"
)

// Password authentication: SCRAM-SHA-256 (RFC 5802/7677, as PostgreSQL
// implements it) and, on TLS connections only, cleartext.

// scramIterations is PostgreSQL's default scram_iterations.
const scramIterations = 4096

// authenticate runs password authentication for user; it returns an
// *errcode.Error (28P01) when the client fails it.
func (c *conn) authenticate(user string) error {
	password, known := c.srv.opts.Users[user]
	if c.isTLS && c.srv.opts.AllowCleartextOverTLS {
		return c.authCleartext(user, password, known)
	}
	return c.authSCRAM(user, password, known)
}

func (c *conn) authFailed(user string) error {
	return errcode.New(errcode.AuthFailed, "password authentication failed for user %q", user)
}

func (c *conn) authCleartext(user, password string, known bool) error {
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
	if !known || subtle.ConstantTimeCompare([]byte(pm.Password), []byte(password)) != 1 {
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

func (c *conn) authSCRAM(user, password string, known bool) error {
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
	var salt [16]byte
	if _, err := rand.Read(random[:]); err != nil {
		return err
	}
	if _, err := rand.Read(salt[:]); err != nil {
		return err
	}
	serverNonce := clientNonce + base64.StdEncoding.EncodeToString(random[:])
	serverFirst := fmt.Sprintf("r=%s,s=%s,i=%d", serverNonce, base64.StdEncoding.EncodeToString(salt[:]), scramIterations)
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
	// An unknown user runs the same computation with a random password so
	// that timing does not reveal which users exist.
	if !known {
		password = base64.StdEncoding.EncodeToString(random[:])
	}
	storedKey, serverKey := scramKeys(password, salt[:], scramIterations)
	authMessage := clientFirstBare + "," + serverFirst + "," + clientFinalWithoutProof
	clientSignature := hmacSHA256(storedKey, []byte(authMessage))
	clientKey := make([]byte, len(proof))
	for i := range proof {
		clientKey[i] = proof[i] ^ clientSignature[i]
	}
	computed := sha256.Sum256(clientKey)
	if !known || subtle.ConstantTimeCompare(computed[:], storedKey) != 1 {
		return c.authFailed(user)
	}
	serverSignature := hmacSHA256(serverKey, []byte(authMessage))
	c.backend.Send(&pgproto3.AuthenticationSASLFinal{Data: []byte("v=" + base64.StdEncoding.EncodeToString(serverSignature))})
	return nil
}
