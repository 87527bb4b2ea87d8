#!/usr/bin/env bash
# Fails when a file of the repository carries another project's licence header or licence text.
# Every line of tracegate's code and prose is written here; test inputs kept verbatim from another
# project live under a testdata/ directory with a note naming their source, and are not checked.
#   scripts/check-licence-headers.sh
# Checked: the files git tracks plus the untracked ones it would add (not the ignored ones), as
# they are in the working tree. Two kinds of evidence:
#   - a phrase that only a licence grant uses, anywhere in the file (Apache's "unless required by
#     applicable law", MIT's "permission is hereby granted", an SPDX tag, ...);
#   - a copyright line, or a line naming another project's authors, in a file's first lines:
#     tracegate puts no copyright notice in its files, so one at the top came with copied code.
# A mention of a licence in prose ("EDOT is Apache-2.0 licensed") is not a header and passes.
# The patterns are written with a bracket expression (e.g. "licen[s]ed") so that this script does
# not match itself.
set -euo pipefail
cd "$(dirname "$0")/.."

# Where a copyright line still counts as a header.
HEADER_LINES=15

# Outside testdata/ directories; the root LICENSE or NOTICE is where tracegate would state its own.
paths=(-- . ':(exclude,glob)**/testdata/**' ':(exclude)LICENSE*' ':(exclude)NOTICE*')

grant=(
	-e 'licen[s]ed to .{1,80} under one or more contributor'
	-e 'licen[s]es this file to you under'
	-e 'licen[s]ed under the (apache|mit|bsd|elastic|mozilla|gnu)'
	-e 'unless required by applicable law or agreed to in [w]riting'
	-e 'spdx-license-[i]dentifier'
	-e 'permission is hereby granted, free of [c]harge'
	-e 'use of this source code is governed by [a]'
	-e 'redistribution and use in source and binary for[m]s'
	-e 'this product includes software developed (at|by) [^ ]'
	-e 'all files in this repository are licen[s]ed under'
	-e 'the software is provided "as is", without warrant[y]'
)
header=(
	-e '^[[:space:]]*(//|#|/?\*+|<!--|--|;+)?[[:space:]]*(copyrigh[t]|\(c\)|©)([[:space:]]|$)'
	-e 'the (opentelemetry|jaeger|zipkin|openzipkin|prometheus|go|kubernetes|grpc) author[s]'
	-e 'datadog, in[c]\.|elasticsearch b\.[v]\.|uber technologies, in[c]'
)

# git grep -n prints path:line:text; -I skips binary files.
found=$(
	{
		git grep --untracked -nIiE "${grant[@]}" "${paths[@]}" || true
		git grep --untracked -nIiE "${header[@]}" "${paths[@]}" |
			awk -F: -v max="$HEADER_LINES" '$2 <= max' || true
	} | cut -c1-160 | sort -t: -k1,1 -k2,2n -u
)

if [ -n "$found" ]; then
	echo "Another project's licence header or licence text in these files:"
	echo "$found"
	echo
	echo "tracegate's files are written by this project. Rewrite each one in our own words (facts such"
	echo "as field names, protocols or an algorithm described in words may stay; code, comments and"
	echo "sentences may not), without the header. A test input kept verbatim belongs under a testdata/"
	echo "directory, with a note naming where it comes from."
	echo "$(cut -d: -f1 <<<"$found" | sort -u | wc -l) file(s)"
	exit 1
fi
