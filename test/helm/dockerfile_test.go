package helm

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDockerfile checks the image against the chart (no Docker engine runs here): every port of
// the chart's values is EXPOSEd with its protocol, the user is the chart's runAsUser, and the
// entrypoint and default arguments are what the chart and the docs expect.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	exposed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^EXPOSE (.+)$`).FindAllStringSubmatch(df, -1) {
		for p := range strings.FieldsSeq(m[1]) {
			exposed[p] = true
		}
	}
	vals := readValues(t, chartDir+"/values.yaml")
	ports := vals["ports"].(map[string]any)
	for name, v := range ports {
		p := v.(map[string]any)
		want := strconv.Itoa(int(p["containerPort"].(float64))) + "/" + strings.ToLower(p["protocol"].(string))
		if !exposed[want] {
			t.Errorf("Dockerfile does not EXPOSE %s (chart port %s)", want, name)
		}
	}
	if !exposed["13133/tcp"] {
		t.Error("Dockerfile does not EXPOSE the health check 13133/tcp")
	}
	for _, want := range []string{
		"FROM scratch",
		"RUN make build",
		"ARG USER_UID=10001",
		"ARG USER_GID=10001",
		"USER ${USER_UID}:${USER_GID}",
		"/etc/ssl/certs/ca-certificates.crt",
		`ENTRYPOINT ["/tracegate"]`,
		`CMD ["--config", "/etc/tracegate/config.yaml"]`,
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile has no %q", want)
		}
	}
	sc := vals["podSecurityContext"].(map[string]any)
	if sc["runAsUser"].(float64) != 10001 || sc["runAsGroup"].(float64) != 10001 {
		t.Errorf("chart podSecurityContext %v: want the image's UID/GID 10001", sc)
	}
}
