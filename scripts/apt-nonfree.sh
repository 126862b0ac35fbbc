# shellcheck shell=bash
# Sourced by the scripts that fetch Debian non-free packages without
# installing anything (nvidia-libs.sh, cuda-toolkit.sh). apt_nonfree DIR
# [SUITE] copies the host's Debian source (/etc/apt/sources.list.d/
# debian.sources) under DIR/apt with its Components widened to non-free and,
# when SUITE is given, its suite names (bookworm, bookworm-updates,
# bookworm-security) switched to SUITE; it then sets apt_opts, the apt-get
# options that keep apt's lists and caches under DIR/apt too. A host
# without that file (a sources.list, as debootstrap and Debian's installer
# write) gets the same from its Debian mirror (scripts/apt-sources.sh):
# the release and its -updates suite.

# shellcheck source=scripts/apt-sources.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-sources.sh"

apt_nonfree() {
	local dir=$1 suite=${2:-} src=/etc/apt/sources.list.d/debian.sources host_suite
	rm -rf "$dir/apt"
	mkdir -p "$dir/apt/sources" "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial"
	if [[ ! -r $src ]]; then
		if ! host_debian_source; then
			echo "$(basename "$0"): the host's apt sources name no Debian mirror to derive the non-free source from" >&2
			return 1
		fi
		src=$dir/apt/host.sources
		{
			echo "Types: deb"
			echo "URIs: $debian_uri"
			echo "Suites: $debian_suite $debian_suite-updates"
			echo "Components: main"
			[[ -z $debian_signed_by ]] || echo "Signed-By: $debian_signed_by"
		} >"$src"
	fi
	local sed_args=(-e 's/^Components:.*$/Components: main contrib non-free non-free-firmware/')
	if [[ -n $suite ]]; then
		host_suite=$(sed -n 's/^Suites: *\([a-z]*\).*/\1/p' "$src" | head -n1)
		if [[ -z $host_suite ]]; then
			echo "$(basename "$0"): no Suites line in $src" >&2
			return 1
		fi
		sed_args+=(-e "/^Suites:/s/\\b$host_suite\\b/$suite/g")
	fi
	sed -E "${sed_args[@]}" "$src" >"$dir/apt/sources/debian.sources"
	grep -q '^Components: .*non-free' "$dir/apt/sources/debian.sources" || {
		echo "$(basename "$0"): could not add non-free to the Components of $src" >&2
		return 1
	}
	# shellcheck disable=SC2034 # read by the scripts that source this file
	apt_opts=(
		-o "Dir::Etc::SourceParts=$dir/apt/sources"
		-o Dir::Etc::SourceList=/dev/null
		-o "Dir::State::Lists=$dir/apt/lists"
		-o "Dir::Cache=$dir/apt/cache"
		-o Debug::NoLocking=1
	)
}
