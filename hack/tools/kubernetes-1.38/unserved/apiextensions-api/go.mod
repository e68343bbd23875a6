// Module apiextensions-api stands in for k8s.io/apiextensions-api, which
// the Go module proxy does not serve and no package of this build imports.
module k8s.io/apiextensions-api

go 1.27.0
