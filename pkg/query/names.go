package query

// CheckName applies the rules of a query's names to one name given
// elsewhere, such as a resource parameter: field names it in the error.
func CheckName(field, name string) error { return checkNames(field, []string{name}) }

// CheckNames applies them to a list of names, as a selection's builds.
func CheckNames(field string, names []string) error { return checkNames(field, names) }
