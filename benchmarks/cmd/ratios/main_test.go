package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/agentcontract/tool/benchmarks
BenchmarkFloor/medium-2         	  100	      1000 ns/op	 395.00 MB/s	     200 B/op	       5 allocs/op
BenchmarkFloor/medium-2         	  100	      3000 ns/op	 395.00 MB/s	     200 B/op	       5 allocs/op
BenchmarkFloor/medium-2         	  100	      2000 ns/op	 395.00 MB/s	     200 B/op	       5 allocs/op
BenchmarkTool/medium-2          	  100	      4000 ns/op	 395.00 MB/s	     100 B/op	       2 allocs/op
BenchmarkMCPSDK/dispatch/medium-2	  100	     20000 ns/op	 395.00 MB/s	    1000 B/op	      50 allocs/op
BenchmarkMCPSDK/dispatch/large-2	  100	     90000 ns/op	 395.00 MB/s	    9000 B/op	     500 allocs/op
BenchmarkOneTimeCompile-2       	   10	    500000 ns/op	  90000 B/op	    1000 allocs/op
PASS
`

func TestReport(t *testing.T) {
	results, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 5 {
		t.Fatalf("got %d results, want 5", len(results))
	}
	if got := median(results[0].metrics["ns/op"]); got != 2000 {
		t.Errorf("Floor median = %v, want 2000", got)
	}
	var out strings.Builder
	if err := report(&out, results); err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(out.String(), "\n")[1:] {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]+" "+f[1]] = f
		}
	}
	for key, want := range map[string][2]string{ // x Floor ns/op, x Floor B/op
		"Floor medium":           {"1.00", "1.00"},
		"Tool medium":            {"2.00", "0.50"},
		"MCPSDK/dispatch medium": {"10.00", "5.00"},
		"MCPSDK/dispatch large":  {"-", "-"}, // no Floor/large in the sample
		"OneTimeCompile -":       {"-", "-"},
	} {
		f, ok := rows[key]
		if !ok {
			t.Errorf("no row %q in\n%s", key, out.String())
			continue
		}
		if f[4] != want[0] || f[6] != want[1] {
			t.Errorf("%s: ratios %s, %s; want %s, %s", key, f[4], f[6], want[0], want[1])
		}
	}
}

func TestSplit(t *testing.T) {
	for in, want := range map[string][2]string{
		"Floor/medium":          {"Floor", "medium"},
		"MCPSDK/inmemory/large": {"MCPSDK/inmemory", "large"},
		"OneTimeCompile":        {"OneTimeCompile", ""},
	} {
		if b, s := split(in); b != want[0] || s != want[1] {
			t.Errorf("split(%q) = %q, %q; want %q, %q", in, b, s, want[0], want[1])
		}
	}
}
