package elasticsearchdocumentsexporter

import (
	"compress/gzip"
	"errors"
	"fmt"
	"net/url"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configtls"
)

// Config configures the exporter: where Elasticsearch is and how to authenticate, as the contrib
// elasticsearch exporter's settings of the same names.
type Config struct {
	// Endpoints are Elasticsearch's URLs (a comma-separated string works too); requests go round
	// robin, a failing node is retried on the next.
	Endpoints []string `mapstructure:"endpoints"`
	// APIKey is an encoded API key (Authorization: ApiKey ...); or User and Password.
	APIKey   configopaque.String `mapstructure:"api_key"`
	User     string              `mapstructure:"user"`
	Password configopaque.String `mapstructure:"password"`
	// TLS: the CA of a cluster that signed its own certificate (ca_file), client certificates.
	TLS configtls.ClientConfig `mapstructure:"tls"`
	// CompressionLevel is the gzip level of bulk bodies: 0 sends them uncompressed, 1 (default)
	// is the cheapest CPU per byte.
	CompressionLevel int `mapstructure:"compression_level"`
	// Timeout bounds one bulk request. Default 90s.
	Timeout time.Duration `mapstructure:"timeout"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

func createDefaultConfig() *Config {
	return &Config{CompressionLevel: 1, Timeout: 90 * time.Second}
}

// Validate checks the endpoints, the credentials and the limits.
func (cfg *Config) Validate() error {
	var errs []error
	if len(cfg.Endpoints) == 0 {
		errs = append(errs, errors.New("endpoints must name at least one Elasticsearch URL"))
	}
	for _, e := range cfg.Endpoints {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("endpoints: %q is not an http or https URL", e))
		}
	}
	if cfg.APIKey != "" && (cfg.User != "" || cfg.Password != "") {
		errs = append(errs, errors.New("api_key and user/password are exclusive"))
	}
	if (cfg.User == "") != (cfg.Password == "") {
		errs = append(errs, errors.New("user and password go together"))
	}
	if cfg.CompressionLevel < gzip.NoCompression || cfg.CompressionLevel > gzip.BestCompression {
		errs = append(errs, fmt.Errorf("compression_level must be 0 to 9, got %d", cfg.CompressionLevel))
	}
	if cfg.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout must be positive, got %s", cfg.Timeout))
	}
	return errors.Join(errs...)
}
