package provisioning

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// composeFile is the part of docker-compose.yaml the dev stack relies on.
type composeFile struct {
	Services map[string]struct {
		Image string `yaml:"image"`
		Build *struct {
			Context    string `yaml:"context"`
			Dockerfile string `yaml:"dockerfile"`
			Target     string `yaml:"target"`
		} `yaml:"build"`
		Entrypoint  []string          `yaml:"entrypoint"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
	} `yaml:"services"`
}

var (
	stagePattern = regexp.MustCompile(`(?m)^FROM\s+(\S+)(?:\s+AS\s+(\S+))?`)
	copyPattern  = regexp.MustCompile(`(?m)^COPY\s+(.+)$`)
)

// The dev stack cannot run here (no Docker), so this checks what would
// break it: every file it builds from or mounts exists, the stages it
// names are in the Dockerfile, the plugin ids and executable names match
// the plugin.json files, and the seeder, ClickHouse and the provisioned
// data source agree on address, database and credentials.
func TestCompose(t *testing.T) {
	var c composeFile
	readYAML(t, filepath.Join(root, "docker-compose.yaml"), &c)
	ch, seeder, grafana := c.Services["clickhouse"], c.Services["seeder"], c.Services["grafana"]
	if !strings.HasPrefix(ch.Image, "clickhouse/clickhouse-server:") || seeder.Build == nil || grafana.Build == nil {
		t.Fatalf("want services clickhouse (image), seeder and grafana (built): %+v", c.Services)
	}

	for name, s := range c.Services {
		if s.Build != nil {
			checkBuild(t, name, s.Build.Context, s.Build.Dockerfile, s.Build.Target)
		}
		for _, v := range s.Volumes {
			if host, _, ok := strings.Cut(v, ":"); ok && strings.HasPrefix(host, ".") {
				if _, err := os.Stat(filepath.Join(root, host)); err != nil {
					t.Errorf("%s mounts %s: %v", name, host, err)
				}
			}
		}
	}
	if !slices.Contains(grafana.Volumes, "./provisioning:"+grafanaProvisioning+":ro") {
		t.Errorf("grafana does not mount ./provisioning at %s: %v", grafanaProvisioning, grafana.Volumes)
	}
	checkExecutable(t, filepath.Join(root, grafana.Build.Context, grafana.Build.Dockerfile))
	ids := readPluginIDs(t)
	unsigned := strings.Split(grafana.Environment["GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS"], ",")
	for _, id := range []string{ids.app, ids.datasource, ids.panel} {
		if !slices.Contains(unsigned, id) {
			t.Errorf("grafana does not allow unsigned %s: %v", id, unsigned)
		}
	}
	if grafana.DependsOn["seeder"].Condition != "service_completed_successfully" || seeder.DependsOn["clickhouse"].Condition != "service_healthy" {
		t.Errorf("start order: grafana after the seeder %+v, the seeder after a healthy clickhouse %+v", grafana.DependsOn, seeder.DependsOn)
	}
	script := strings.Join(seeder.Entrypoint, " ")
	if !strings.Contains(script, "flamediff migrate --dsn") || !strings.Contains(script, "flamediff seed --dsn") {
		t.Errorf("the seeder runs %q, want flamediff migrate and seed", script)
	}

	// The seeder's DSN, ClickHouse's account and the data source agree.
	opts, err := clickhouse.ParseDSN(seeder.Environment["DSN"])
	if err != nil {
		t.Fatalf("seeder DSN: %v", err)
	}
	s := loadSettings(t)
	if want := s.Host + ":" + strconv.Itoa(s.Port); len(opts.Addr) != 1 || opts.Addr[0] != want || s.Host != "clickhouse" {
		t.Errorf("seeder writes to %v, the data source reads %s (the clickhouse service)", opts.Addr, want)
	}
	if opts.Auth.Database != s.DefaultDatabase || opts.Auth.Username != s.Username || opts.Auth.Password != s.Password ||
		ch.Environment["CLICKHOUSE_USER"] != s.Username || ch.Environment["CLICKHOUSE_PASSWORD"] != s.Password {
		t.Errorf("seeder %+v, clickhouse %v and data source (%s, %s) disagree on database or account",
			opts.Auth, ch.Environment, s.DefaultDatabase, s.Username)
	}
}

// checkBuild checks that a service's build has its context, Dockerfile and
// target stage, and that the Dockerfile copies only files that exist.
func checkBuild(t *testing.T, service, context, dockerfile, target string) {
	t.Helper()
	dir := filepath.Join(root, context)
	b, err := os.ReadFile(filepath.Join(dir, dockerfile))
	if err != nil {
		t.Fatalf("%s: %v", service, err)
	}
	var stages []string
	for _, m := range stagePattern.FindAllStringSubmatch(string(b), -1) {
		stages = append(stages, m[2])
	}
	if !slices.Contains(stages, target) {
		t.Errorf("%s builds target %q; the Dockerfile has stages %q", service, target, stages)
	}
	for _, m := range copyPattern.FindAllStringSubmatch(string(b), -1) {
		args := strings.Fields(m[1])
		if strings.HasPrefix(args[0], "--from=") {
			continue
		}
		for _, src := range args[:len(args)-1] {
			if _, err := os.Stat(filepath.Join(dir, src)); err != nil {
				t.Errorf("Dockerfile copies %s: %v", src, err)
			}
		}
	}
}

// checkExecutable checks that the Dockerfile names the data source's
// executables as the SDK's build does and Grafana looks for them:
// datasource/<executable>_linux_<arch> in the nested plugin's directory.
func checkExecutable(t *testing.T, dockerfile string) {
	t.Helper()
	b, err := os.ReadFile(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	var ds struct{ Executable string }
	readJSON(t, filepath.Join(root, "src/datasource/plugin.json"), &ds)
	if want := "/datasource/" + ds.Executable + "_linux_$arch"; ds.Executable == "" || !strings.Contains(string(b), want) {
		t.Errorf("the Dockerfile does not build %s (executable %q in src/datasource/plugin.json)", want, ds.Executable)
	}
}
