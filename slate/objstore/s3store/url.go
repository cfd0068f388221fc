package s3store

import (
	"fmt"
	"net/url"
	"strings"
)

// ParseURL parses s3://bucket/prefix?endpoint=...&region=...&path_style=true.
func ParseURL(rawURL string) (Config, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Config{}, fmt.Errorf("objstore: parse url %q: %w", rawURL, err)
	}
	if u.Scheme != "s3" {
		return Config{}, fmt.Errorf("objstore: %q is not an s3:// url", rawURL)
	}
	if u.Host == "" {
		return Config{}, fmt.Errorf("objstore: s3 url %q has no bucket", rawURL)
	}
	q := u.Query()
	cfg := Config{
		Bucket:          u.Host,
		Prefix:          strings.Trim(u.Path, "/"),
		Endpoint:        q.Get("endpoint"),
		Region:          q.Get("region"),
		AccessKeyID:     q.Get("access_key_id"),
		SecretAccessKey: q.Get("secret_access_key"),
		SessionToken:    q.Get("session_token"),
	}
	switch strings.ToLower(q.Get("path_style")) {
	case "", "false", "0":
	case "true", "1":
		cfg.UsePathStyle = true
	default:
		return Config{}, fmt.Errorf("objstore: s3 url %q: path_style must be true or false", rawURL)
	}
	return cfg, nil
}
