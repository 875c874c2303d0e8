// Command gpx_flamediff is the Flamediff data source's backend, started by Grafana.
package main

import (
	"os"

	"github.com/grafana/grafana-plugin-sdk-go/backend/datasource"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"

	"github.com/flamediff/flamediff/pkg/plugin"
)

func main() {
	if err := datasource.Manage(plugin.ID, plugin.NewDatasource, datasource.ManageOpts{}); err != nil {
		log.DefaultLogger.Error("flamediff backend stopped", "error", err.Error())
		os.Exit(1)
	}
}
