package transport

import "sync"

// Check ids: the checks of preflight/check the findings belong to.
const (
	CheckTransport = "nccl-transport"
	CheckGPUDirect = "gpudirect-rdma"
	CheckMemlock   = "rdma-memlock"
	CheckP2P       = "gpu-p2p"
)

// Class is what a cause costs the job, which sets its status: Slower and
// Fails warn (an error under PREFLIGHT_POLICY=strict, as every warning
// is), Mismatch is an error with the mismatch exit code (78), NodeFault an
// error with the node-fault code (75), Informational is info.
type Class int

// The classes, least costly first.
const (
	Informational Class = iota
	Slower
	Fails
	Mismatch
	NodeFault
)

// Any is the remedy for every launcher.
const Any Launcher = ""

// Cause is one reason the prediction gives, with its remedy per launcher.
// EveryJob marks a cause that stops a job on one node too: NCCL initialises
// its network (ncclNetInit in init.cc's commAlloc) for every communicator.
type Cause struct {
	Code     string
	Check    string
	Class    Class
	EveryJob bool
	Remedy   map[Launcher]string
}

// Causes is every cause, by code. The remedies cite their sources in
// docs/transport.md.
var Causes = sync.OnceValue(func() map[string]Cause {
	return map[string]Cause{
		"socket-interface-unmatched": {Check: CheckTransport, Class: Mismatch, Remedy: map[Launcher]string{
			Any: "set NCCL_SOCKET_IFNAME to an interface this container has, up and with an address (a list of prefixes; \"=name\" for an exact name, \"^name\" to exclude), or unset it"}},
		"no-socket-interface": {Check: CheckTransport, Class: Fails, Remedy: map[Launcher]string{
			Any: "give the container a network interface with an address; NCCL's bootstrap needs one"}},
		"net-unavailable": {Check: CheckTransport, Class: Mismatch, Remedy: map[Launcher]string{
			Any: "unset NCCL_NET, or make the network it names usable (the causes below say what it lacks)"}},
		"net-plugin-missing": {Check: CheckTransport, Class: Mismatch, Remedy: map[Launcher]string{
			Any: "install the net plugin NCCL_NET_PLUGIN names in the image where the loader finds it (LD_LIBRARY_PATH or ld.so.cache), with its dependencies, or unset NCCL_NET_PLUGIN"}},
		"ib-hca-unmatched": {Check: CheckTransport, Class: Mismatch, Remedy: map[Launcher]string{
			Any: "set NCCL_IB_HCA to HCAs this container has (a list of prefixes, \"=mlx5_0:1\" for an exact device and port), or unset it"}},
		"gid-index-empty": {Check: CheckTransport, Class: Mismatch, Remedy: map[Launcher]string{
			Any: "set NCCL_IB_GID_INDEX to a populated RoCE v2 entry of ports/N/gids (show_gids lists them), or unset it to let NCCL search"}},
		"ports-down": {Check: CheckTransport, Class: NodeFault, Remedy: map[Launcher]string{
			Any:        "the node's RDMA links are down: check the cables, the switch and the subnet manager (ibstat), and run the job elsewhere meanwhile",
			Kubernetes: "cordon the node (kubectl cordon) and check its RDMA links (ibstat): cables, switch, subnet manager",
			Slurm:      "drain the node (scontrol update nodename=... state=drain reason=rdma-link-down) and check its RDMA links (ibstat)"}},
		"port-down": {Check: CheckTransport, Class: Informational, Remedy: map[Launcher]string{
			Any: "none needed when the port is a spare left unplugged; else check its cable and switch port"}},
		"rdma-device-not-passed": {Check: CheckTransport, Class: Fails, Remedy: map[Launcher]string{
			Docker:     "pass the RDMA devices: docker run --device=/dev/infiniband (or one --device per /dev/infiniband/uverbsN, and rdma_cm)",
			Kubernetes: "request the RDMA device plugin's resource in resources.limits (the k8s-rdma-shared-dev-plugin's rdma/..., or an SR-IOV network's resource), which mounts /dev/infiniband and allows it",
			Slurm:      "with enroot/pyxis, export MELLANOX_VISIBLE_DEVICES=all (enroot's 99-mellanox hook mounts the uverbs devices); under Apptainer, do not run with --contain"}},
		"rdma-device-denied": {Check: CheckTransport, Class: Fails, Remedy: map[Launcher]string{
			Docker:     "use --device=/dev/infiniband/uverbsN (a -v bind mount does not allow the device), or --device-cgroup-rule='c 231:* rmw'",
			Kubernetes: "request the RDMA device plugin's resource instead of a hostPath mount of /dev/infiniband: the plugin's allocation is what the device cgroup allows",
			Slurm:      "allow the uverbs devices in the job's device cgroup (cgroup.conf ConstrainDevices, gres.conf), or set MELLANOX_VISIBLE_DEVICES=all under enroot"}},
		"rdma-driver-not-loaded": {Check: CheckTransport, Class: Fails, Remedy: map[Launcher]string{
			Any:        "load ib_uverbs on the host (modprobe ib_uverbs; rdma-core's rdma-load-modules service does it at boot)",
			Kubernetes: "load ib_uverbs on the node (the Network Operator's driver container, or modprobe ib_uverbs) and restart the pod"}},
		"libibverbs-missing": {Check: CheckTransport, Class: Fails, Remedy: map[Launcher]string{
			Any:   "install rdma-core's libibverbs in the image (Debian/Ubuntu: apt-get install libibverbs1 ibverbs-providers; RHEL: dnf install libibverbs)",
			Slurm: "install libibverbs in the image, or with enroot set MELLANOX_MOUNT_DRIVER=1 and MELLANOX_VISIBLE_DEVICES=all to mount the host's"}},
		"rdma-provider-missing": {Check: CheckTransport, Class: Fails, Remedy: map[Launcher]string{
			Any:   "install the libibverbs provider for this HCA in the image (Debian/Ubuntu: ibverbs-providers; RHEL: libibverbs), from the same rdma-core as libibverbs",
			Slurm: "install the provider in the image, or with enroot set MELLANOX_MOUNT_DRIVER=1 to mount the host's"}},
		"efa-plugin-missing": {Check: CheckTransport, Class: Fails, Remedy: map[Launcher]string{
			Any: "install aws-ofi-nccl and libfabric (the EFA installer's /opt/amazon) in the image and put their lib directories on LD_LIBRARY_PATH, or set NCCL_NET_PLUGIN to the plugin's path"}},
		"ib-disabled": {Check: CheckTransport, Class: Informational, Remedy: map[Launcher]string{
			Any: "unset NCCL_IB_DISABLE to use the HCAs"}},
		"no-rdma-device": {Check: CheckTransport, Class: Informational, Remedy: map[Launcher]string{
			Any: "none needed on an Ethernet-only cluster; else give the container the node's HCAs"}},
		"socket-virtual-interface": {Check: CheckTransport, Class: Slower, Remedy: map[Launcher]string{
			Any: "set NCCL_SOCKET_IFNAME to the interface between the nodes (NCCL's default skips only docker* and lo)"}},
		"gdr-off": {Check: CheckGPUDirect, Class: Slower, Remedy: map[Launcher]string{
			Any:        "load nvidia_peermem on the host (modprobe nvidia_peermem), or meet DMA-BUF's conditions: Linux 5.12 or later, rdma-core 34 or later in the image, a driver of CUDA 11.7 or later",
			Kubernetes: "enable GPUDirect RDMA in the GPU Operator (driver.rdma.enabled=true loads nvidia_peermem), or meet DMA-BUF's conditions: Linux 5.12 or later, rdma-core 34 or later in the image"}},
		"peermem-unseen": {Check: CheckGPUDirect, Class: Slower, Remedy: map[Launcher]string{
			Any: "use NCCL 2.23.4 or later in the image: earlier releases look for nvidia_peermem only under /sys/kernel/mm/memory_peers, which the inbox RDMA stack has not"}},
		"dmabuf-unconfirmed": {Check: CheckGPUDirect, Class: Informational, Remedy: map[Launcher]string{
			Any: "load nvidia_peermem on the host to be sure, or use the open GPU kernel module"}},
		"gdr-distance": {Check: CheckGPUDirect, Class: Slower, Remedy: map[Launcher]string{
			Any:        "give the job GPUs and HCAs under the same PCIe switch, or raise NCCL_NET_GDR_LEVEL (PHB, SYS) if the platform handles peer traffic through the CPU well",
			Kubernetes: "align GPUs and HCAs per NUMA node (the kubelet's Topology Manager, policy single-numa-node), or raise NCCL_NET_GDR_LEVEL"}},
		"memlock-limited": {Check: CheckMemlock, Class: Fails, Remedy: map[Launcher]string{
			Docker:     "docker run --ulimit memlock=-1:-1 (as NCCL's documentation says), or run as root with --cap-add=IPC_LOCK",
			Kubernetes: "raise the runtime's limit (LimitMEMLOCK=infinity in containerd's or CRI-O's systemd unit; Kubernetes has no per-pod setting), or run as root with securityContext.capabilities.add: [IPC_LOCK]",
			Slurm:      "start slurmd with LimitMEMLOCK=infinity and keep PropagateResourceLimits from lowering it (PropagateResourceLimitsExcept=MEMLOCK), as NCCL's documentation asks"}},
		"rdma-verbs-failed": {Check: CheckTransport, Class: Fails, Remedy: map[Launcher]string{
			Any: "the HCA opened but a verbs call failed: use an rdma-core in the image as recent as the host's driver and firmware need (ibv_devinfo in the container shows what it sees), and read the host's kernel log for the device"}},
		"rdma-check-hung": {Check: CheckTransport, Class: NodeFault, EveryJob: true, Remedy: map[Launcher]string{
			Any:        "libibverbs hung on this node's HCAs: check the HCA and its driver (dmesg, ibstat) and run the job elsewhere meanwhile; if the node is merely slow, raise PREFLIGHT_RDMA_TIMEOUT",
			Kubernetes: "cordon the node (kubectl cordon) and check its HCAs and their driver (dmesg, ibstat); if the node is merely slow, raise PREFLIGHT_RDMA_TIMEOUT",
			Slurm:      "drain the node (scontrol update nodename=... state=drain reason=rdma-hung) and check its HCAs (dmesg, ibstat); if the node is merely slow, raise PREFLIGHT_RDMA_TIMEOUT"}},
		"rdma-check-unavailable": {Check: CheckTransport, Class: Informational, Remedy: map[Launcher]string{
			Any: "run the gpu-preflight binary with its embedded probe (it needs a glibc image), or set PREFLIGHT_RDMA_CHECK=off"}},
		"iommu-translated": {Check: CheckP2P, Class: Slower, Remedy: map[Launcher]string{
			Any: "boot the host with iommu=pt (or the IOMMU off), or disable ACS on the PCIe switches, as NCCL's troubleshooting guide says: translated peer traffic goes through the root complex, slowly or not at all"}},
		"numa-remote": {Check: CheckP2P, Class: Informational, Remedy: map[Launcher]string{
			Any:        "give the job CPUs of the GPUs' NUMA node",
			Kubernetes: "use the kubelet's CPU Manager (static) and Topology Manager so the pod's CPUs are local to its GPUs",
			Slurm:      "bind tasks near their GPUs (srun --gpu-bind=closest, --cpu-bind)"}},
	}
})

// RemedyFor returns the cause's remedy for launcher, or its remedy for any
// launcher.
func (c Cause) RemedyFor(l Launcher) string {
	if r, ok := c.Remedy[l]; ok {
		return r
	}
	return c.Remedy[Any]
}
