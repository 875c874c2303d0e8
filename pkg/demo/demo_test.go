package demo

import (
	"reflect"
	"slices"
	"testing"
)

func meanTotal(b Build) float64 {
	var sum float64
	for _, r := range b.Runs {
		sum += float64(r.Profile.Total())
	}
	return sum / float64(len(b.Runs))
}

func TestGenerateShapeAndValidity(t *testing.T) {
	apps := Generate(1)
	if len(apps) != 2 {
		t.Fatalf("got %d apps, want 2", len(apps))
	}
	for _, app := range apps {
		if len(app.Builds) != Builds {
			t.Fatalf("%s: %d builds, want %d", app.Name, len(app.Builds), Builds)
		}
		for i, b := range app.Builds {
			if len(b.Runs) != RunsPerBuild {
				t.Fatalf("%s %s: %d runs", app.Name, b.Name, len(b.Runs))
			}
			if i > 0 && !b.Time.After(app.Builds[i-1].Time) {
				t.Errorf("%s: build %s not after the previous one", app.Name, b.Name)
			}
			for _, r := range b.Runs {
				if err := r.Profile.CheckValid(); err != nil {
					t.Fatalf("%s %s %s: %v", app.Name, b.Name, r.Run, err)
				}
				if !r.Profile.Timed() {
					t.Errorf("%s %s %s: samples carry no time", app.Name, b.Name, r.Run)
				}
			}
		}
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := Generate(7), Generate(7)
	if !reflect.DeepEqual(a[0].Builds[3].Runs[2].Profile.Samples, b[0].Builds[3].Runs[2].Profile.Samples) {
		t.Fatal("same seed gave different samples")
	}
}

// The demo must show what the dashboards promise: a regression at 1.7.0 in
// the checkout service, explained by a modified function, and an
// improvement at 1.5.0 in the iOS app.
func TestGenerateHasRegressionAndImprovement(t *testing.T) {
	apps := Generate(1)
	checkout, ios := apps[0], apps[1]
	before, after := meanTotal(checkout.Builds[6]), meanTotal(checkout.Builds[7])
	if after < before*1.1 {
		t.Errorf("checkout 1.7.0 mean total %.0f, want >10%% above 1.6.0's %.0f", after, before)
	}
	if !slices.Contains(checkout.Builds[7].Modified, "checkout/pricing.ApplyDiscounts") {
		t.Errorf("checkout 1.7.0 changes %v lack the regressing function", checkout.Builds[7].Modified)
	}
	before, after = meanTotal(ios.Builds[4]), meanTotal(ios.Builds[5])
	if after > before*0.95 {
		t.Errorf("ios 1.5.0 mean total %.0f, want >5%% below 1.4.0's %.0f", after, before)
	}
	// Elsewhere builds differ by noise only.
	before, after = meanTotal(checkout.Builds[1]), meanTotal(checkout.Builds[2])
	if r := after / before; r < 0.95 || r > 1.05 {
		t.Errorf("checkout 1.1.0 -> 1.2.0 changed by %.2fx without a code change", r)
	}
}
