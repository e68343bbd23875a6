// Module ktesting stands in for k8s.io/ktesting, which the Go module proxy
// does not serve and no package of this build imports.
module k8s.io/ktesting

go 1.27.0
