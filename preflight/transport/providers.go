package transport

import (
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// providers names the libibverbs provider that drives an HCA, by the
// kernel driver of its PCI device, else by its PCI vendor: rdma-core's
// providers/<name> match the kernel's RDMA drivers, which bind to these
// PCI drivers (docs/transport.md, "Providers").
var providers = []struct {
	drivers  []string
	vendor   string
	provider string
}{
	{[]string{"mlx5_core"}, "", "mlx5"},
	{[]string{"mlx4_core"}, "", "mlx4"},
	{[]string{"efa"}, "0x1d0f", "efa"},
	{[]string{"ice", "i40e"}, "", "irdma"},
	{[]string{"bnxt_en"}, "0x14e4", "bnxt_re"},
	{[]string{"qede"}, "0x1077", "qedr"},
	{[]string{"hns3"}, "0x19e5", "hns"},
	{[]string{"erdma"}, "0x1ded", "erdma"},
	{[]string{"mana"}, "0x1414", "mana"},
	{[]string{"vmw_pvrdma"}, "0x15ad", "vmw_pvrdma"},
	{[]string{"cxgb4"}, "0x1425", "cxgb4"},
	{[]string{"hfi1"}, "", "hfi1verbs"},
}

// ProviderFor returns the provider h needs, "" when the table does not
// know its driver.
func ProviderFor(h facts.HCA) string {
	for _, p := range providers {
		for _, d := range p.drivers {
			if h.Driver == d {
				return p.provider
			}
		}
	}
	for _, p := range providers {
		if p.vendor != "" && strings.EqualFold(h.Vendor, p.vendor) {
			return p.provider
		}
	}
	return ""
}

// EFA reports whether h is an AWS Elastic Fabric Adapter, which NCCL's own
// IB transport skips (its ports' link layer is "Unknown") and only the
// aws-ofi-nccl plugin drives.
func EFA(h facts.HCA) bool { return ProviderFor(h) == "efa" }
