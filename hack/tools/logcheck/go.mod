// Module logcheck builds logcheck, the linter of Kubernetes' structured and
// contextual logging rules, which make verify runs.
module github.com/evictionrequest/apiserver/hack/tools/logcheck

go 1.26.0

tool sigs.k8s.io/logtools/logcheck

require (
	golang.org/x/exp v0.0.0-20240506185415-9bf2ced13842 // indirect
	golang.org/x/mod v0.31.0 // indirect
	golang.org/x/sync v0.19.0 // indirect
	golang.org/x/tools v0.40.0 // indirect
	sigs.k8s.io/logtools v0.10.1 // indirect
)
