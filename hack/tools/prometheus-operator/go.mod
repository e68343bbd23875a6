// The Prometheus Operator release whose CustomResourceDefinitions the e2e
// suite installs to dry-run the monitoring overlay of artifacts/.
module github.com/evictionrequest/apiserver/hack/tools/prometheus-operator

go 1.26.0

require github.com/prometheus-operator/prometheus-operator v0.85.0
