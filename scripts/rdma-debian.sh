#!/usr/bin/env bash
# Fetches real RDMA and NCCL user space from Debian and unpacks it with
# dpkg -x into the download cache (scripts/cache-dir.sh), as an image
# built with `apt-get install --no-install-recommends` would hold it.
# Nothing is installed on this machine: apt resolves against an empty dpkg
# status and keeps its lists under the set's folder (scripts/apt-nonfree.sh).
#
#   scripts/rdma-debian.sh image      bookworm's rdma-core 44 (libibverbs1,
#                                     ibverbs-providers) and the C library it
#                                     loads: the image side of preflight/rdma's
#                                     tests. Prints the root.
#   scripts/rdma-debian.sh nccl SUITE libnccl2 of trixie (2.22.3) or sid
#                                     (2.29), with that suite's C and C++
#                                     libraries (glibc 2.38 at least; bookworm
#                                     has no libnccl2). Prints the root.
#   scripts/rdma-debian.sh oracle     runs each of those NCCLs' bootstrap
#                                     (ncclGetUniqueId, which needs no GPU) in
#                                     network namespaces laid out by
#                                     preflight/nccl/testdata/oracle.cases and
#                                     writes the interface each chose to
#                                     preflight/nccl/testdata/oracle.txt, the
#                                     truth the interface model is tested
#                                     against. Needs root (ip netns, veth).
#
# A set is fetched once; later runs print its root (they unpack again from
# the cached .debs when this script changed).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
set=${1:-}
cache=$(bash "$here/scripts/cache-dir.sh")
usage() {
	echo "usage: rdma-debian.sh image | nccl trixie|sid | oracle" >&2
	exit 2
}
case $set in
image | oracle) ;;
nccl) [[ ${2:-} == trixie || ${2:-} == sid ]] || usage ;;
*) usage ;;
esac

# fetch NAME SUITE PACKAGE... unpacks the packages and every package they
# depend on, from SUITE ("" for the host's), under $dir/root and sets root.
fetch() {
	local name=$1 suite=$2 dir stamp start debs deb
	shift 2
	dir=$cache/rdma-debian/$name
	root=$dir/root
	mkdir -p "$dir"
	exec 9>"$dir/.lock"
	flock 9
	stamp=$(cat "$0" "$here/scripts/apt-nonfree.sh" | sha256sum | cut -d' ' -f1)
	if [[ -f $dir/.ready && $(<"$dir/.ready") == "$stamp" ]]; then
		return
	fi
	start=$SECONDS
	# shellcheck source=scripts/apt-nonfree.sh
	source "$here/scripts/apt-nonfree.sh"
	apt_nonfree "$dir" "$suite"
	if [[ $suite == sid ]]; then
		# sid has no -updates or -security suite: keep the first source,
		# with sid alone.
		awk 'BEGIN { RS = ""; ORS = "\n" } NR == 1 { sub(/Suites:[^\n]*/, "Suites: sid"); print }' \
			"$dir/apt/sources/debian.sources" >"$dir/apt/sid.sources"
		mv "$dir/apt/sid.sources" "$dir/apt/sources/debian.sources"
	fi
	: >"$dir/apt/status"
	mkdir -p "$dir/debs/partial"
	apt_opts+=(-o "Dir::State::status=$dir/apt/status" -o APT::Install-Recommends=false
		-o "Dir::Cache::archives=$dir/debs")
	echo "rdma-debian: apt-get update and download (${suite:-host} lists under $dir/apt)" >&2
	bash "$here/scripts/log-download.sh" "rdma-debian: $name"
	apt-get "${apt_opts[@]}" -qq update >&2
	# An install into the empty status, download only: every package the
	# set depends on lands in $dir/debs, those already there are kept.
	apt-get "${apt_opts[@]}" -qq --download-only -y install "$@" 2>&1 | grep -v unsandboxed >&2 || true
	debs=("$dir"/debs/*.deb)
	if [[ ! -e ${debs[0]} ]]; then
		echo "rdma-debian: apt downloaded nothing for $* (see its output above)" >&2
		exit 1
	fi
	rm -rf "$root"
	mkdir -p "$root"
	: >"$dir/packages.txt"
	for deb in "${debs[@]}"; do
		dpkg -x "$deb" "$root"
		# shellcheck disable=SC2016 # dpkg-deb's own fields, not the shell's
		dpkg-deb --show --showformat='${Package}=${Version}\n' "$deb" >>"$dir/packages.txt"
	done
	# libc-bin's trigger: the root's own /etc/ld.so.cache.
	ldconfig -r "$root"
	echo "rdma-debian: $name: ${#debs[@]} packages unpacked in $((SECONDS - start)) s" >&2
	echo "$stamp" >"$dir/.ready"
}

case $set in
image)
	fetch image '' libibverbs1 ibverbs-providers
	echo "$root"
	exit 0
	;;
nccl)
	fetch "nccl-$2" "$2" libnccl2
	echo "$root"
	exit 0
	;;
esac

# The oracle: a program that calls ncclGetUniqueId, run through each
# suite's own loader once per case, in a network namespace holding the
# case's interfaces.
if [[ $(id -u) -ne 0 ]]; then
	echo "rdma-debian: oracle needs root (ip netns, veth)" >&2
	exit 1
fi
work=$(mktemp -d)
ns=rdma-oracle-$$
trap 'ip netns del "$ns" 2>/dev/null || true; rm -rf "$work"' EXIT
printf '%s\n' '#include <dlfcn.h>' '#include <stdio.h>' \
	'int main(void) {' \
	'	void *h = dlopen("libnccl.so.2", RTLD_NOW);' \
	'	if (!h) { fprintf(stderr, "%s\n", dlerror()); return 2; }' \
	'	int (*get)(char *) = (int (*)(char *))dlsym(h, "ncclGetUniqueId");' \
	'	char id[128];' \
	'	printf("result %d\n", get(id));' \
	'	return 0;' \
	'}' >"$work/uniqueid.c"
gcc -O1 -o "$work/uniqueid" "$work/uniqueid.c" -ldl
cases=$here/preflight/nccl/testdata/oracle.cases
out=$here/preflight/nccl/testdata/oracle.txt
{
	echo "# The interface Debian's libnccl2 bootstrap chose (its NCCL_DEBUG=INFO"
	echo "# line \"Bootstrap : Using\", \"Bootstrap: Using\" from 2.29; none when it"
	echo "# found none) in each case of oracle.cases:"
	echo "# VERSION | LAYOUT | SETTINGS | CHOICE. Written by scripts/rdma-debian.sh oracle."
} >"$out"

# oracle.cases: "layout NAME" starts a namespace; each "if NAME STATE
# [ADDR...]" adds a veth NAME (its peer, zzN, has no address) that is
# running (both ends up), up (its peer down: no carrier) or down, with
# those addresses; each "env NAME=VALUE..." runs the bootstrap with those
# variables ("-": none). Interfaces get indexes in the order they are
# added.
run_layout() {
	local settings chose vars
	for settings in "${envs[@]}"; do
		vars=()
		[[ $settings == - ]] || read -ra vars <<<"$settings"
		chose=$(ip netns exec "$ns" env -i NCCL_DEBUG=INFO "${vars[@]}" \
			"$loader" --library-path "$lib" "$work/uniqueid" 2>&1 || true)
		chose=$(sed -En 's/.*Bootstrap ?: Using ([^:]*):.*/\1/p' <<<"$chose" | head -n1)
		echo "$version | $layout | $settings | ${chose:-none}" >>"$out"
	done
}
for suite in trixie sid; do
	fetch "nccl-$suite" "$suite" libnccl2
	loader=$root/usr/lib64/ld-linux-x86-64.so.2
	lib=$root/usr/lib/x86_64-linux-gnu
	version=$(sed -n 's/^libnccl2=\([0-9.]*\)-.*/\1/p' "$cache/rdma-debian/nccl-$suite/packages.txt")
	layout=
	envs=()
	peers=0
	while read -r kind rest; do
		case $kind in
		'' | '#'*) continue ;;
		layout)
			[[ -z $layout ]] || run_layout
			layout=$rest
			envs=()
			ip netns del "$ns" 2>/dev/null || true
			ip netns add "$ns"
			# No IPv6 link-local address appears by itself: a case lists
			# every address its interfaces hold.
			ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.addr_gen_mode=1
			ip -n "$ns" link set lo up
			;;
		if)
			read -r name state addrs <<<"$rest"
			peers=$((peers + 1))
			ip -n "$ns" link add "$name" type veth peer name "zz$peers"
			for a in $addrs; do
				# An IPv6 address is usable at once, without duplicate
				# address detection.
				if [[ $a == *:* ]]; then
					ip -n "$ns" addr add "$a" dev "$name" nodad
				else
					ip -n "$ns" addr add "$a" dev "$name"
				fi
			done
			case $state in
			running) ip -n "$ns" link set "zz$peers" up && ip -n "$ns" link set "$name" up ;;
			up) ip -n "$ns" link set "$name" up ;;
			down) ;;
			*)
				echo "rdma-debian: $cases: state '$state' of $name is not running, up or down" >&2
				exit 1
				;;
			esac
			;;
		env) envs+=("$rest") ;;
		*)
			echo "rdma-debian: $cases: unknown line '$kind $rest'" >&2
			exit 1
			;;
		esac
	done <"$cases"
	[[ -z $layout ]] || run_layout
done
echo "rdma-debian: wrote $out" >&2
