# shellcheck shell=bash
# Sourced by the scripts that fetch Debian packages without installing them
# (sysroot.sh, apt-nonfree.sh). host_debian_source finds the host's Debian
# mirror in its apt sources, in either format apt reads (sources.list(5)):
#
#   one-line  /etc/apt/sources.list, /etc/apt/sources.list.d/*.list
#             deb [signed-by=/usr/share/keyrings/k.gpg] URI SUITE COMPONENT...
#   deb822    /etc/apt/sources.list.d/*.sources
#             Types: deb / URIs: URI / Suites: SUITE... / Signed-By: KEYRING
#
# Debian 12 container and cloud images ship debian.sources; Debian 11, and
# Debian 12 from its installer or debootstrap, ship sources.list; Ubuntu
# 24.04 ships ubuntu.sources, Ubuntu 22.04 sources.list. The first enabled
# "deb" source whose suite is a Debian release (not -updates, -security or
# -backports, which live elsewhere or carry other packages) is the mirror:
# every Debian mirror serves every release that is not archived. An Ubuntu
# host has none (its suites are jammy, noble, ...) and gets status 1.
#
# On success it sets debian_uri (no trailing slash), debian_suite,
# debian_signed_by (a keyring path, or empty when the source names none or
# holds the key inline) and debian_source_file. APT_ETC (default /etc/apt)
# is the folder read.

# The suite names of Debian releases and their aliases.
debian_suites='buster|bullseye|bookworm|trixie|forky|duke|sid|oldoldstable|oldstable|stable|testing|unstable'

host_debian_source() {
	local etc=${APT_ETC:-/etc/apt} files=() f line
	[[ -f $etc/sources.list ]] && files+=("$etc/sources.list")
	# sources.list.d in name order, both formats together, as apt reads it.
	while IFS= read -r f; do
		files+=("$f")
	done < <(find "$etc/sources.list.d" -maxdepth 1 -type f \( -name '*.list' -o -name '*.sources' \) 2>/dev/null | LC_ALL=C sort)
	((${#files[@]})) || return 1
	# One "FILE<TAB>URI<TAB>SUITE<TAB>SIGNED-BY" line per enabled deb source,
	# in the order apt reads them.
	line=$(awk -v suites="^($debian_suites)\$" '
		function flush() {
			if (types ~ /(^|[ \t])deb([ \t]|$)/ && enabled != "no" && uris != "" && suite_ok != "")
				print file "\t" uris "\t" suite_ok "\t" signed
			types = ""; uris = ""; suite_ok = ""; signed = ""; enabled = ""
		}
		FNR == 1 { flush(); file = FILENAME; deb822 = file ~ /\.sources$/ }
		deb822 && /^[ \t]*$/ { flush(); next }
		/^[ \t]*#/ { next }
		deb822 {
			if (match($0, /^[A-Za-z-]+:/)) {
				key = tolower(substr($0, 1, RLENGTH - 1)); val = substr($0, RLENGTH + 1)
				gsub(/^[ \t]+|[ \t]+$/, "", val)
				if (key == "types") types = val
				else if (key == "uris") { split(val, u, /[ \t]+/); uris = u[1] }
				else if (key == "enabled") enabled = tolower(val)
				else if (key == "signed-by") signed = (val ~ /^\//) ? val : ""
				else if (key == "suites") {
					n = split(val, s, /[ \t]+/)
					for (i = 1; i <= n; i++) if (s[i] ~ suites) { suite_ok = s[i]; break }
				}
			}
			next
		}
		$1 == "deb" {
			opts = ""
			rest = substr($0, index($0, "deb") + 3)
			if (match(rest, /^[ \t]*\[[^]]*\]/)) {
				opts = substr(rest, RSTART, RLENGTH); rest = substr(rest, RSTART + RLENGTH)
			}
			n = split(rest, w, /[ \t]+/)
			k = 0
			for (i = 1; i <= n; i++) if (w[i] != "") f[++k] = w[i]
			sb = ""
			if (match(opts, /signed-by=[^] \t]+/)) sb = substr(opts, RSTART + 10, RLENGTH - 10)
			if (k >= 2 && f[2] ~ suites) print file "\t" f[1] "\t" f[2] "\t" sb
		}
		END { if (deb822) flush() }
	' "${files[@]}" | head -n 1)
	[[ -n $line ]] || return 1
	# shellcheck disable=SC2034 # read by the scripts that source this file
	IFS=$'\t' read -r debian_source_file debian_uri debian_suite debian_signed_by <<<"$line"
	# apt's mirror method (Debian's cloud images: mirror+file:/etc/apt/mirrors/
	# debian.list) names a file listing mirrors: take its first.
	if [[ $debian_uri == mirror+file:* || $debian_uri == mirror:* ]]; then
		f=${debian_uri#mirror+file:}
		f=${f#mirror:}
		f=${f#//}
		debian_uri=$(grep -m1 -E '^[a-z]+://' "$f" 2>/dev/null | awk '{print $1}') || true
		[[ -n $debian_uri ]] || return 1
	fi
	debian_uri=${debian_uri%/}
}
