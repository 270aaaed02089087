// otlp_receiver: the OpenTelemetry Collector's own OTLP receiver
// (go.opentelemetry.io/collector/receiver/otlpreceiver) on loopback, for
// the tests' profile pushes. Each request it accepts is written to stdout
// as one JSON line, read back through the Collector's pdata (pprofile), so
// a test sees what the Collector understood of perfscript's bytes:
//
//	{"resource": {...}, "profiles": [{"type": "samples", "unit": "count",
//	  "period": ..., "samples": [{"stack": ["leaf", ..., "root"],
//	  "values": [...]}], "mappings": [...]}]}
//
// Usage: otlp_receiver [ADDR:]PORT (ADDR 127.0.0.1 unless given; PORT 0
// picks one); it prints "listening PORT" first, then a line per request,
// and stops on SIGTERM or SIGINT.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/confignet"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/collector/receiver/xreceiver"
)

type sample struct {
	Stack  []string          `json:"stack"`
	Lines  []int64           `json:"lines"`
	Values []int64           `json:"values"`
	Attrs  map[string]string `json:"attributes,omitempty"`
}

type mapping struct {
	File   string            `json:"file"`
	Start  uint64            `json:"start"`
	Limit  uint64            `json:"limit"`
	Offset uint64            `json:"offset"`
	Attrs  map[string]string `json:"attributes,omitempty"`
}

type profile struct {
	Type     string    `json:"type"`
	Unit     string    `json:"unit"`
	Period   int64     `json:"period"`
	PType    string    `json:"period_type"`
	Time     uint64    `json:"time_unix_nano"`
	Duration uint64    `json:"duration_nano"`
	ID       string    `json:"profile_id"`
	Scope    string    `json:"scope"`
	Samples  []sample  `json:"samples"`
	Mappings []mapping `json:"mappings"`
}

type request struct {
	Resource map[string]string `json:"resource"`
	Profiles []profile         `json:"profiles"`
}

var out sync.Mutex

func str(d pprofile.ProfilesDictionary, i int32) string {
	if i < 0 || int(i) >= d.StringTable().Len() {
		return fmt.Sprintf("<bad string index %d>", i)
	}
	return d.StringTable().At(int(i))
}

func attrs(d pprofile.ProfilesDictionary, idx pcommon.Int32Slice) map[string]string {
	if idx.Len() == 0 {
		return nil
	}
	m := map[string]string{}
	for _, i := range idx.AsRaw() {
		if i < 0 || int(i) >= d.AttributeTable().Len() {
			m["<bad attribute index>"] = fmt.Sprint(i)
			continue
		}
		a := d.AttributeTable().At(int(i))
		m[str(d, a.KeyStrindex())] = a.Value().AsString()
	}
	return m
}

func stack(d pprofile.ProfilesDictionary, s pprofile.Sample) ([]string, []int64) {
	var names []string
	var lines []int64
	if int(s.StackIndex()) >= d.StackTable().Len() {
		return []string{"<bad stack index>"}, nil
	}
	for _, li := range d.StackTable().At(int(s.StackIndex())).LocationIndices().AsRaw() {
		if li < 0 || int(li) >= d.LocationTable().Len() {
			names = append(names, "<bad location index>")
			continue
		}
		loc := d.LocationTable().At(int(li))
		if loc.Lines().Len() == 0 {
			names = append(names, fmt.Sprintf("0x%x", loc.Address()))
			lines = append(lines, 0)
		}
		for j := 0; j < loc.Lines().Len(); j++ { // inlined first, as in pprof
			ln := loc.Lines().At(j)
			fi := int(ln.FunctionIndex())
			if fi < 0 || fi >= d.FunctionTable().Len() {
				names = append(names, "<bad function index>")
				continue
			}
			names = append(names, str(d, d.FunctionTable().At(fi).NameStrindex()))
			lines = append(lines, ln.Line())
		}
	}
	return names, lines
}

func summary(pd pprofile.Profiles) []request {
	d := pd.Dictionary()
	var reqs []request
	for i := 0; i < pd.ResourceProfiles().Len(); i++ {
		rp := pd.ResourceProfiles().At(i)
		r := request{Resource: map[string]string{}}
		rp.Resource().Attributes().Range(func(k string, v pcommon.Value) bool {
			r.Resource[k] = v.AsString()
			return true
		})
		for j := 0; j < rp.ScopeProfiles().Len(); j++ {
			sp := rp.ScopeProfiles().At(j)
			for k := 0; k < sp.Profiles().Len(); k++ {
				p := sp.Profiles().At(k)
				q := profile{
					Type: str(d, p.SampleType().TypeStrindex()), Unit: str(d, p.SampleType().UnitStrindex()),
					Period: p.Period(), PType: str(d, p.PeriodType().TypeStrindex()),
					Time: uint64(p.Time()), Duration: p.DurationNano(),
					ID: p.ProfileID().String(), Scope: sp.Scope().Name(),
				}
				for s := 0; s < p.Samples().Len(); s++ {
					smp := p.Samples().At(s)
					names, lines := stack(d, smp)
					q.Samples = append(q.Samples, sample{Stack: names, Lines: lines,
						Values: smp.Values().AsRaw(), Attrs: attrs(d, smp.AttributeIndices())})
				}
				for m := 1; m < d.MappingTable().Len(); m++ {
					mp := d.MappingTable().At(m)
					q.Mappings = append(q.Mappings, mapping{File: str(d, mp.FilenameStrindex()),
						Start: mp.MemoryStart(), Limit: mp.MemoryLimit(), Offset: mp.FileOffset(),
						Attrs: attrs(d, mp.AttributeIndices())})
				}
				r.Profiles = append(r.Profiles, q)
			}
		}
		reqs = append(reqs, r)
	}
	return reqs
}

func consume(_ context.Context, pd pprofile.Profiles) error {
	out.Lock()
	defer out.Unlock()
	for _, r := range summary(pd) {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		fmt.Println(string(b))
	}
	return nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: otlp_receiver [ADDR:]PORT")
		os.Exit(2)
	}
	addr := os.Args[1]
	if !strings.Contains(addr, ":") {
		addr = "127.0.0.1:" + addr
	}
	host, _, _ := net.SplitHostPort(addr)
	ln, err := net.Listen("tcp", addr) // the port, picked before the receiver binds it
	if err != nil {
		fmt.Fprintln(os.Stderr, "otlp_receiver:", err)
		os.Exit(1)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC = configoptional.None[configgrpc.ServerConfig]()
	hc := otlpreceiver.HTTPConfig{ServerConfig: confighttp.NewDefaultServerConfig()}
	hc.ServerConfig.NetAddr = confignet.AddrConfig{Endpoint: net.JoinHostPort(host, fmt.Sprint(port)),
		Transport: confignet.TransportTypeTCP}
	cfg.Protocols.HTTP = configoptional.Some(hc)
	next, _ := xconsumer.NewProfiles(consume)
	set := receivertest.NewNopSettings(f.Type())
	r, err := f.(xreceiver.Factory).CreateProfiles(context.Background(), set, cfg, next)
	if err != nil {
		fmt.Fprintln(os.Stderr, "otlp_receiver:", err)
		os.Exit(1)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		fmt.Fprintln(os.Stderr, "otlp_receiver:", err)
		os.Exit(1)
	}
	fmt.Printf("listening %d\n", port)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	_ = r.Shutdown(context.Background())
}
