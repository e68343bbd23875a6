/*
Copyright The EvictionRequest API Server Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// measure is one row of the report: the samples of each API, one per round.
type measure struct {
	Name           string               `json:"name"`
	Unit           string               `json:"unit"`
	HigherIsBetter bool                 `json:"higherIsBetter"`
	Samples        map[string][]float64 `json:"samples"`
	Median         map[string]float64   `json:"median"`
	// Ratio is ours over the CRD's median.
	Ratio float64 `json:"ratio"`
	// Advantage is how many times better ours is: Ratio when higher is
	// better, its inverse otherwise; above 1 ours is ahead.
	Advantage float64 `json:"advantage"`
}

// results holds the measures in the order they were first recorded.
type results struct {
	measures []*measure
	// ours are measures of our server alone, which the CRD has no
	// counterpart of.
	ours []single
}

// single is one measure of our server alone, a sample per round.
type single struct {
	Name    string    `json:"name"`
	Unit    string    `json:"unit"`
	Samples []float64 `json:"samples"`
}

// addOurs records a sample of a measure of our server alone.
func (r *results) addOurs(name, unit string, v float64) {
	i := slices.IndexFunc(r.ours, func(s single) bool { return s.Name == name })
	if i < 0 {
		r.ours = append(r.ours, single{Name: name, Unit: unit})
		i = len(r.ours) - 1
	}
	r.ours[i].Samples = append(r.ours[i].Samples, v)
}

func newResults() *results {
	return &results{}
}

func (r *results) add(name, unit string, higherIsBetter bool, api string, v float64) {
	i := slices.IndexFunc(r.measures, func(m *measure) bool { return m.Name == name })
	if i < 0 {
		r.measures = append(r.measures, &measure{Name: name, Unit: unit, HigherIsBetter: higherIsBetter, Samples: map[string][]float64{}})
		i = len(r.measures) - 1
	}
	r.measures[i].Samples[api] = append(r.measures[i].Samples[api], v)
}

func (r *results) summarize() {
	for _, m := range r.measures {
		m.Median = map[string]float64{}
		for api, samples := range m.Samples {
			m.Median[api] = median(samples)
		}
		m.Ratio = m.Median["ours"] / m.Median["crd"]
		m.Advantage = m.Ratio
		if !m.HigherIsBetter {
			m.Advantage = 1 / m.Ratio
		}
	}
}

func (r *results) print(o options) {
	fmt.Printf("evictionrequest-apiserver through the aggregator (ours, spoken in %s) against the equivalent CRD (JSON), median of %d rounds (min-max), %d operations per write phase:\n\n", o.oursContent, o.rounds, o.ops)
	fmt.Printf("| %-48s | %-24s | %-24s | %-6s |\n", "measure", "ours", "the CRD", "ratio")
	fmt.Printf("|%s|%s|%s|%s|\n", dashes(50), dashes(26), dashes(26), dashes(8))
	for _, m := range r.measures {
		fmt.Printf("| %-48s | %-24s | %-24s | %6.2f |\n", m.Name, cell(m, "ours"), cell(m, "crd"), m.Ratio)
	}
	fmt.Println()
	for _, m := range r.ours {
		fmt.Printf("Ours alone: %s: %.4g %s (%.4g-%.4g)\n", m.Name, median(m.Samples), m.Unit, slices.Min(m.Samples), slices.Max(m.Samples))
	}
}

func cell(m *measure, api string) string {
	s := m.Samples[api]
	return fmt.Sprintf("%.4g %s (%.4g-%.4g)", m.Median[api], m.Unit, slices.Min(s), slices.Max(s))
}

func dashes(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '-'
	}
	return string(b)
}

func (r *results) writeJSON(path string, o options) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	out, err := json.MarshalIndent(struct {
		When     time.Time  `json:"when"`
		Rounds   int        `json:"rounds"`
		Ops      int        `json:"opsPerWritePhase"`
		Objects  int        `json:"objectsHeld"`
		Clients  []int      `json:"clients"`
		Content  string     `json:"oursContentType"`
		Measures []*measure `json:"measures"`
		Ours     []single   `json:"oursAlone"`
	}{time.Now().UTC(), o.rounds, o.ops, o.objects, o.clients, o.oursContent, r.measures, r.ours}, "", "  ")
	if err != nil {
		return err
	}
	fmt.Printf("Results written to %s\n", path)
	return os.WriteFile(path, append(out, '\n'), 0o644)
}

// drawChart draws the advantage of ours for every measure but the
// latencies, as horizontal bars around 1.
func (r *results) drawChart(path string) error {
	var values plotter.Values
	var names []string
	for _, m := range r.measures {
		if strings.Contains(m.Name, "p99") {
			continue // latencies: in the table only
		}
		values = append(values, m.Advantage)
		names = append(names, m.Name)
	}
	p := plot.New()
	p.Title.Text = "evictionrequest-apiserver against the equivalent CRD (above 1: ours is ahead)"
	p.X.Label.Text = "times better (rate ratio, or inverse cost ratio)"
	bars, err := plotter.NewBarChart(values, vg.Points(12))
	if err != nil {
		return err
	}
	bars.Horizontal = true
	p.Add(bars)
	p.NominalY(names...)
	line, err := plotter.NewLine(plotter.XYs{{X: 1, Y: -0.5}, {X: 1, Y: float64(len(names)) - 0.5}})
	if err != nil {
		return err
	}
	line.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	p.Add(line)
	p.X.Min, p.X.Max = 0, max(slices.Max(values), 1)*1.1
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := p.Save(9*vg.Inch, vg.Length(len(names)+3)*0.3*vg.Inch, path); err != nil {
		return err
	}
	fmt.Printf("Chart drawn to %s\n", path)
	return nil
}

func median(samples []float64) float64 {
	s := slices.Clone(samples)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
