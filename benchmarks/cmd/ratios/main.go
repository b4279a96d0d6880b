// Command ratios reads `go test -bench` output and prints, for every
// benchmark, the median of each metric over its runs and the ratio of its
// median ns/op (and B/op) to that of BenchmarkFloor at the same payload size.
//
// The payload size is the last element of a benchmark's name
// (BenchmarkNaive/medium, BenchmarkMCPSDK/dispatch/medium); a benchmark is
// compared with Floor/<size> when that exists, so benchmarks added later
// (such as the library's own) appear without changes here. Benchmarks with no
// Floor at their size (such as BenchmarkOneTimeCompile) are listed with their
// medians only.
//
// Usage: go run ./cmd/ratios [file ...]   (standard input if no file)
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Reference is the benchmark every other one is compared with.
const Reference = "Floor"

// result collects every run of one benchmark.
type result struct {
	name    string               // without "Benchmark" and the -GOMAXPROCS suffix
	metrics map[string][]float64 // unit -> values, one per run
}

var procsSuffix = regexp.MustCompile(`-\d+$`)

// parse reads benchmark result lines, in order of first appearance.
func parse(r io.Reader) ([]*result, error) {
	var (
		order []*result
		byKey = map[string]*result{}
		pkg   string
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg:"); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue // not a result line (e.g. a log line starting with "Benchmark")
		}
		name := procsSuffix.ReplaceAllString(strings.TrimPrefix(f[0], "Benchmark"), "")
		key := pkg + "\x00" + name
		res := byKey[key]
		if res == nil {
			res = &result{name: name, metrics: map[string][]float64{}}
			byKey[key] = res
			order = append(order, res)
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("bad value %q in %q", f[i], line)
			}
			res.metrics[f[i+1]] = append(res.metrics[f[i+1]], v)
		}
	}
	return order, sc.Err()
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// split returns a benchmark's base name and size: Naive/medium -> Naive, medium.
// A name with no "/" has no size.
func split(name string) (base, size string) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return name, ""
	}
	return name[:i], name[i+1:]
}

func ratio(x, ref float64, ok bool) string {
	switch {
	case !ok:
		return "-"
	case ref == 0 && x == 0:
		return "1.00"
	case ref == 0:
		return "inf"
	}
	return strconv.FormatFloat(x/ref, 'f', 2, 64)
}

func format(x float64) string {
	if x >= 100 || x == float64(int64(x)) {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// report writes the table: rows grouped by size, in order of first
// appearance, with sizeless benchmarks last.
func report(w io.Writer, results []*result) error {
	type refVals struct{ ns, bytes float64 }
	refs := map[string]refVals{}
	var sizes []string
	for _, r := range results {
		base, size := split(r.name)
		if !slices.Contains(sizes, size) {
			sizes = append(sizes, size)
		}
		if base == Reference {
			refs[size] = refVals{median(r.metrics["ns/op"]), median(r.metrics["B/op"])}
		}
	}
	// Sizeless benchmarks go last.
	if i := slices.Index(sizes, ""); i >= 0 {
		sizes = append(slices.Delete(sizes, i, i+1), "")
	}

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "benchmark\tsize\truns\tmedian ns/op\tx "+Reference+" ns/op\tmedian B/op\tx "+Reference+" B/op\tmedian allocs/op\t")
	for _, size := range sizes {
		ref, haveRef := refs[size]
		for _, r := range results {
			base, s := split(r.name)
			if s != size {
				continue
			}
			ns, hasNs := r.metrics["ns/op"]
			bs, hasB := r.metrics["B/op"]
			allocs, hasAllocs := r.metrics["allocs/op"]
			cell := func(xs []float64, has bool) string {
				if !has {
					return "-"
				}
				return format(median(xs))
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n",
				base, orDash(size), len(ns),
				cell(ns, hasNs), ratio(median(ns), ref.ns, haveRef && hasNs),
				cell(bs, hasB), ratio(median(bs), ref.bytes, haveRef && hasB),
				cell(allocs, hasAllocs))
		}
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func main() {
	var inputs []io.Reader
	for _, name := range os.Args[1:] {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ratios:", err)
			os.Exit(1)
		}
		defer f.Close()
		inputs = append(inputs, f)
	}
	if len(inputs) == 0 {
		inputs = append(inputs, os.Stdin)
	}
	results, err := parse(io.MultiReader(inputs...))
	if err != nil {
		fmt.Fprintln(os.Stderr, "ratios:", err)
		os.Exit(1)
	}
	if len(results) == 0 {
		fmt.Fprintln(os.Stderr, "ratios: no benchmark results found")
		os.Exit(1)
	}
	if err := report(os.Stdout, results); err != nil {
		fmt.Fprintln(os.Stderr, "ratios:", err)
		os.Exit(1)
	}
}
