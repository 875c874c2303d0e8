package provisioning

import (
	"fmt"
	"regexp"
)

// Grafana's template variables in a query model, as the tests resolve
// them.

// ${var:format} and [[var]].
var variableRef = regexp.MustCompile(`\$\{(\w+)(?::[^}]*)?\}|\$(\w+)|\[\[(\w+)\]\]`)

// interpolate replaces variables in every string of a query model like the
// data source's applyTemplateVariables: a multi-value variable inside a
// list becomes several entries.
func interpolate(v any, vars map[string][]string) (any, error) {
	switch v := v.(type) {
	case string:
		out, err := expand(v, vars)
		if err != nil || len(out) == 1 {
			return first(out), err
		}
		return nil, fmt.Errorf("%q has %d values where one is expected", v, len(out))
	case []any:
		var list []any
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("list entry %v is not a string", e)
			}
			out, err := expand(s, vars)
			if err != nil {
				return nil, err
			}
			for _, o := range out {
				list = append(list, o)
			}
		}
		return list, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			var err error
			if out[k], err = interpolate(e, vars); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
		}
		return out, nil
	}
	return v, nil
}

func first(s []string) any {
	if len(s) == 0 {
		return nil
	}
	return s[0]
}

// expand returns the values of s: one per value of the multi-value variable
// it consists of, else one string with every variable replaced.
func expand(s string, vars map[string][]string) ([]string, error) {
	var err error
	if m := variableRef.FindStringSubmatch(s); m != nil && m[0] == s {
		name := m[1] + m[2] + m[3]
		values, ok := vars[name]
		if !ok {
			return nil, fmt.Errorf("unknown variable %q", name)
		}
		return values, nil
	}
	out := variableRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := variableRef.FindStringSubmatch(ref)
		values, ok := vars[m[1]+m[2]+m[3]]
		if !ok || len(values) != 1 {
			err = fmt.Errorf("variable in %q is unknown or not single-valued", s)
			return ref
		}
		return values[0]
	})
	return []string{out}, err
}
