# Sourced by dashboard.sh, firstview.sh and engines.sh: the pages they
# measure, chosen one way for all of them.
#
# write_urls DIR URLS ROUNDS picks real names and ids from the server at
# $BASE and writes the URL file URLS ("pattern path" lines, ROUNDS rounds);
# it sets COUNT (restores), NINST, NREG, INST, PLANS, GID and NPAT. Needs
# curl and jq; RW_BENCH_PLANS as dashboard.sh describes.
#
# per_url_row LOAD BASE URLS LABEL CLIENTS N DIR prints the load table row
# ("| `pattern` | requests | errors | p50 | p95 | p99 | max | KiB | verdict |")
# of CLIENTS clients on one pattern's URLs, N requests.
#
# firstview_routes DB sets ROUTES, the routes whose first view is measured,
# from names read from the SQLite warehouse DB itself (no request warms
# anything).

enc() { jq -rn --arg v "$1" '$v|@uri'; }
pick() { local i=$1; shift; local a=("$@"); echo "${a[i % ${#a[@]}]}"; }

# Real names and ids, picked from the API, varied so that no page is
# measured on one cached instance: ten instances (the two busiest, then eight
# spread over the fleet from busy to quiet), a database and restores of each,
# every regression, several orders and filters of the list, pages of the
# instance list. Instances without restores (a source server known only by
# its backup history) have no database page to measure. The URL file lists
# ROUNDS rounds; each round holds every pattern once, with the round's
# variant, so every pattern gets the same share of the requests whatever its
# number of variants.
write_urls() {
	local dir=$1 urls=$2 rounds=$3 inst k j other code p
	api_get() { curl -fsS --max-time 120 "$BASE$1"; }
	api_get /api/instances >"$dir/instances.json"
	COUNT=$(jq '[.[].restores] | add' "$dir/instances.json")
	NINST=$(jq length "$dir/instances.json")
	mapfile -t INST < <(jq -r --argjson k 8 'map(select(.restores > 0)) | sort_by(-.restores, .name) | . as $a | ([0, 1] + [range(0; $k) | 2 + (. * (($a | length) - 3) / ($k - 1) | floor)])
	| unique | .[] | $a[.].name' "$dir/instances.json")
	local DBS=() RIDS=() SRCS=() BUILDS=() GIDS=()
	for inst in "${INST[@]}"; do
		api_get "/api/restores?instance=$(enc "$inst")&limit=2" >"$dir/restore.json"
		DBS+=("$(jq -r '.[0].database' "$dir/restore.json")")
		SRCS+=("$(jq -r '[.[].source_server | select(. != null and . != "")][0] // empty' "$dir/restore.json")")
		mapfile -t -O "${#RIDS[@]}" RIDS < <(jq -r '.[].id' "$dir/restore.json")
	done
	mapfile -t BUILDS < <(jq -r '[.[].build | select(. != "")] | unique | .[]' "$dir/instances.json" | head -5)
	# /api/regressions pages (100 by default): the first 1,000 are enough to pick from.
	api_get "/api/regressions?limit=1000" >"$dir/regressions.json"
	NREG=$(jq length "$dir/regressions.json")
	mapfile -t GIDS < <(jq -r 'sort_by(.ratio) | .[].id' "$dir/regressions.json")
	GID=${GIDS[0]:-}
	# Restore plans: databases with a backup history. RW_BENCH_PLANS names them
	# ("instance|database ..."; the estate's are its source servers', written by
	# `fleet backups`); by default the measured instances' databases whose
	# /api/plan answers 200 (the demo backs up every database).
	PLANS=()
	if [ -n "${RW_BENCH_PLANS:-}" ]; then
		read -ra PLANS <<<"$RW_BENCH_PLANS"
	else
		for k in "${!INST[@]}"; do
			code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 120 "$BASE/api/plan?instance=$(enc "${INST[k]}")&database=$(enc "${DBS[k]}")")
			[ "$code" = 200 ] && PLANS+=("${INST[k]}|${DBS[k]}")
		done
	fi
	local SORTS=(longest shortest slowest fastest oldest newest) KINDS=(full log diff)
	{
		for ((j = 0; j < rounds; j++)); do
			k=$((j % ${#INST[@]}))
			inst=$(enc "${INST[k]}") other=$(enc "${INST[(k + 1) % ${#INST[@]}]}")
			echo "/ /"
			echo "/restores /restores?page=$((j % 5 + 1))"
			echo "/restores?instance= /restores?instance=$inst"
			# The list's duration order is ?sort=longest (?sort=duration is an alias).
			echo "/restores?sort=&kind= /restores?sort=$(pick "$j" "${SORTS[@]}")&kind=$(pick "$j" "${KINDS[@]}")"
			[ ${#BUILDS[@]} -gt 0 ] && echo "/restores?build= /restores?build=$(enc "$(pick "$j" "${BUILDS[@]}")")"
			# The server whose backups the instance restored: from the busiest
			# (a log-shipping primary) to the quietest (a few test restores).
			[ -n "${SRCS[k]}" ] && echo "/restores?source= /restores?source=$(enc "${SRCS[k]}")"
			echo "/restores/{id} /restores/$(pick "$j" "${RIDS[@]}")"
			echo "/instances /instances?page=$((j % ((NINST + 199) / 200) + 1))"
			echo "/instances/{name} /instances/$inst"
			echo "/instances/{name}/databases/{db} /instances/$inst/databases/$(enc "${DBS[k]}")"
			echo "/regressions /regressions"
			echo "/regressions?page= /regressions?page=$((j % 3 + 2))"
			[ -n "$GID" ] && echo "/regressions/{id} /regressions/$(pick "$j" "${GIDS[@]}")"
			echo "/builds /builds"
			echo "/compare?a=&b= /compare?a=$inst&b=$other"
			[ -n "$GID" ] && echo "/reports/regressions/{id} /reports/regressions/$(pick "$j" "${GIDS[@]}")"
			echo "/api/restores?instance= /api/restores?instance=$inst"
			echo "/api/regressions /api/regressions"
			echo "/api/instances /api/instances"
			echo "/api/builds /api/builds"
			echo "/healthz /healthz"
			if [ ${#PLANS[@]} -gt 0 ]; then
				p=$(pick "$j" "${PLANS[@]}")
				echo "/instances/{name}/databases/{db}/plan /instances/$(enc "${p%%|*}")/databases/$(enc "${p#*|}")/plan"
				echo "/api/plan?instance=&database= /api/plan?instance=$(enc "${p%%|*}")&database=$(enc "${p#*|}")"
			fi
		done
	} >"$urls"
	NPAT=$(cut -d' ' -f1 "$urls" | sort -u | wc -l)
}

# Each page under load of its own (issue 32): CLIENTS clients hitting one
# pattern's URLs, N requests, so a page that is fast in the mix but slow
# when everyone opens it at once shows.
per_url_row() {
	local load=$1 base=$2 urls=$3 label=$4 clients=$5 n=$6 dir=$7
	awk -v l="$label" '$1 == l' "$urls" >"$dir/one-url.txt"
	"$load" -base "$base" -urls "$dir/one-url.txt" -c "$clients" -n "$n" -target 50ms -timeout 120s 2>/dev/null |
		grep -F "| \`$label\` |" || true
}

# The names measured, read from the warehouse itself so that no request
# warms anything: a log-shipping secondary (the estate's instance 0), a
# plain instance (instance 1), a database of each, a regression.
firstview_routes() {
	local db=$1 I0 I1 D0 D1 G
	q() { sqlite3 -readonly "$db" "$1"; }
	I0=$(q "SELECT name FROM instance ORDER BY name LIMIT 1")
	I1=$(q "SELECT name FROM instance ORDER BY name LIMIT 1 OFFSET 1")
	D0=$(q "SELECT s.database_name FROM series s JOIN instance i ON i.id = s.instance_id WHERE i.name = '$I0' ORDER BY s.n DESC LIMIT 1")
	D1=$(q "SELECT s.database_name FROM series s JOIN instance i ON i.id = s.instance_id WHERE i.name = '$I1' ORDER BY s.n DESC LIMIT 1")
	G=$(q "SELECT id FROM regression ORDER BY id LIMIT 1")
	ROUTES=(
		"/"
		"/builds"
		"/instances"
		"/instances/$(enc "$I0")"
		"/instances/$(enc "$I1")"
		"/instances/$(enc "$I0")/databases/$(enc "$D0")"
		"/instances/$(enc "$I1")/databases/$(enc "$D1")"
		"/restores"
		"/restores?sort=longest"
		"/regressions"
	)
	[ -n "$G" ] && ROUTES+=("/regressions/$G")
	ROUTES+=("/api/builds" "/api/instances")
}
