package demo

import (
	"strings"
	"testing"

	"github.com/flamediff/flamediff/pkg/query"
	"github.com/flamediff/flamediff/pkg/tree"
	"github.com/flamediff/flamediff/pkg/verdict"
)

// demoVerdict is the verdict of build head against build base of app, as
// the query layer computes it.
func demoVerdict(t *testing.T, app App, base, head int, norm tree.Normalization) *verdict.Verdict {
	t.Helper()
	b := tree.NewBuilder(tree.NewFrames())
	for side, build := range map[tree.Side]Build{tree.Base: app.Builds[base], tree.Head: app.Builds[head]} {
		b.SetRuns(side, len(build.Runs))
		for i, r := range build.Runs {
			if err := b.AddRunProfile(side, i, r.Profile); err != nil {
				t.Fatal(err)
			}
		}
	}
	modified := map[string]bool{}
	for _, f := range app.Builds[head].Modified {
		modified[f] = true
	}
	v, err := query.NewJudge(modified).Verdict(b, tree.Options{Normalize: norm})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The demo that `flamediff seed` loads (seed 1), in both normalisations:
// checkout-service 1.7.0 against 1.6.0 fails on the new regexp.MustCompile
// called from checkout/pricing.ApplyDiscounts, the verdict's first line,
// not on its callers; ios-app 1.5.0's first improvement is the HEIC codec
// that replaced the PNG one under ImageDecoder.decode (one replaced
// culprit with the net change, not a removed and a new one); and
// checkout's builds that changed by
// noise only have no culprit.
func TestDemoCulprits(t *testing.T) {
	checkout, ios := Generate(1)[0], Generate(1)[1]
	for _, norm := range []tree.Normalization{tree.Absolute, tree.Relative} {
		v := demoVerdict(t, checkout, 6, 7, norm)
		if len(v.Regressions) == 0 {
			t.Fatalf("%s: checkout 1.7.0: %s %q, no regression", norm, v.Result, v.Headline)
		}
		top := v.Regressions[0]
		if v.Result != verdict.Fail || top.Function != "regexp.MustCompile" || top.Kind != "new" || top.Callee != "regexp.compile" ||
			strings.Join(top.Path[len(top.Path)-2:], ";") != "checkout/pricing.ApplyDiscounts;regexp.MustCompile" ||
			!strings.HasPrefix(v.Headline, "`regexp.MustCompile` is new in head, called from `checkout/pricing.ApplyDiscounts`") || top.Share < 0.7 {
			t.Errorf("%s: checkout 1.7.0: %s %q, top culprit %+v", norm, v.Result, v.Headline, top)
		}
		for _, c := range v.Regressions {
			if !strings.HasPrefix(c.Function, "regexp") {
				t.Errorf("%s: checkout 1.7.0: culprit %s %v is no part of the new code", norm, c.Kind, c.Path)
			}
		}
		v = demoVerdict(t, ios, 4, 5, norm)
		if len(v.Improvements) == 0 || v.Improvements[0].Function != "ImageKit.ImageDecoder.decode(_:)" || v.Improvements[0].Kind != "replaced" ||
			v.Improvements[0].Callee != "ImageKit.HEICCodec.decode(_:)" || v.Improvements[0].Replaced != "ImageKit.PNGCodec.inflate(_:)" ||
			v.Improvements[0].Path[len(v.Improvements[0].Path)-2] != "FeedKit.FeedCell.configure(with:)" {
			t.Errorf("%s: ios 1.5.0: improvements %+v", norm, v.Improvements)
		}
		for k := 1; k < len(checkout.Builds); k++ {
			if k == 7 {
				continue
			}
			if v := demoVerdict(t, checkout, k-1, k, norm); len(v.Regressions)+len(v.Improvements) > 0 {
				t.Errorf("%s: checkout %s against %s, noise only: %q", norm, checkout.Builds[k].Name, checkout.Builds[k-1].Name, v.Headline)
			}
		}
	}
}
