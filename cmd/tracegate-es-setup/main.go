// Command tracegate-es-setup installs the lifecycle policy and the templates a mapping needs in
// Elasticsearch, as Beats' and APM Server's `setup` does. Run it once per cluster, before tracegate
// writes there, with the same environment tracegate uses:
//
//	ELASTICSEARCH_URL=https://es:9200 ELASTICSEARCH_API_KEY=... tracegate-es-setup --mode ecs
//
// ELASTICSEARCH_CA_FILE names the PEM file of the CA that signed the cluster's certificate, as for
// tracegate (Elasticsearch 8 signs its own by default).
//
// Modes: otel (8.16+: checks that Elasticsearch ships the templates, and adds the retention they
// lack: a 30-day policy through traces-otel@custom), ecs
// (8.12-8.15), plain (7.17, 8.0-8.11), apm-classic (8.0+: installs nothing; checks that the APM
// integration's data streams and ingest pipelines, which configs/elasticsearch/apm-classic.yaml
// writes through, are on the cluster, and prints how to install them and the API key's
// privileges). It is idempotent: resources tracegate installed are upgraded
// only when this version is newer, and resources it did not install are never overwritten unless
// --force is given. The JSON it installs is in configs/elasticsearch/<mode>/.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/tracegate/tracegate/internal/essetup"
)

func main() {
	fs := flag.NewFlagSet("tracegate-es-setup", flag.ExitOnError)
	mode := fs.String("mode", "otel", "mapping: otel (Elasticsearch 8.16+), ecs (8.12-8.15), plain (7.17, 8.0-8.11) or apm-classic (8.0+, a check of the APM integration)")
	force := fs.Bool("force", false, "overwrite existing policies and templates, also newer ones and those tracegate did not install")
	timeout := fs.Duration("timeout", time.Minute, "give up after this long")
	_ = fs.Parse(os.Args[1:])

	url := os.Getenv("ELASTICSEARCH_URL")
	if url == "" {
		url = "http://localhost:9200"
	}
	client, err := essetup.ClientWithCA(os.Getenv("ELASTICSEARCH_CA_FILE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracegate-es-setup:", err)
		os.Exit(1)
	}
	opts := essetup.Options{
		Client:   client,
		URLs:     strings.Split(url, ","),
		APIKey:   os.Getenv("ELASTICSEARCH_API_KEY"),
		Username: os.Getenv("ELASTICSEARCH_USERNAME"),
		Password: os.Getenv("ELASTICSEARCH_PASSWORD"),
		Mode:     *mode,
		Force:    *force,
		Log:      os.Stdout,
	}
	if err := run(opts, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "tracegate-es-setup:", err)
		os.Exit(1)
	}
}

// run installs what opts names, giving up after timeout or at an interrupt.
func run(opts essetup.Options, timeout time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := essetup.Run(ctx, opts)
	return err
}
