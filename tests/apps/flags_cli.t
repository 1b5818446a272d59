#!/bin/sh
# flags_cli.t — the apps' command lines as GNU tools have them
# (apps/common/flags.c over getopt_long): every flag --help lists has a
# description; --flag=value is --flag value (the same run, the same
# figures); an unambiguous prefix works; --version prints loomrun's
# version; a bad flag under loomrun -n 2 is named once, exit 2; a flag that
# takes no value refuses one; a value out of range is named.
. "$(dirname "$0")/../lib.sh"
plan 8
APPS="loom-gen loom-lasso loom-lda loom-lr loom-mf loom-w2v"

# every option row of --help ("  --flag..." or "  -x, --flag...") has a
# description: text in its row after the flag, or on the next row
bad=""
for a in $APPS; do
    "$B/bin/$a" --help >"$T/$a.help" 2>&1 || bad="$bad $a(rc)"
    awk -v a="$a" '
        /^  -/ { if (pend) print a ": " pend; pend = ""
                 s = $0; sub(/^  +/, "", s); split(s, w, "  +")
                 if (w[2] == "") pend = w[1]; next }
        pend && /^   +[^ -]/ { pend = ""; next }
        { if (pend) print a ": " pend; pend = "" }
        END { if (pend) print a ": " pend }' "$T/$a.help" >>"$T/undescribed"
done
"$B/bin/loom-w2v" nearest --help >"$T/near.help"
[ -z "$bad" ] && [ ! -s "$T/undescribed" ] && has "$T/loom-w2v.help" "--seed=S +[a-z]" &&
    has "$T/near.help" "--top=N +[a-z]"
ok $? "every flag of every --help is described (loom-w2v's --seed too)${bad:+: $bad}"
[ -s "$T/undescribed" ] && diag "undescribed:" && sed 's/^/#   /' "$T/undescribed"

# --flag=value and --flag value: the same run
"$B/bin/loom-gen" ratings --users=60 --items=40 --samples=2e3 --out="$T/r" >/dev/null
run_job "$T/eq" "$B/bin/loom-mf" --train="$T/r.train" --test="$T/r.test" --epochs=3 --rank=4 --serial
run_job "$T/sp" "$B/bin/loom-mf" --train "$T/r.train" --test "$T/r.test" --epochs 3 --rank 4 --serial
fin() { grep '^final' "$1"; }
[ $rc -eq 0 ] && [ -n "$(fin "$T/eq")" ] && [ "$(fin "$T/eq")" = "$(fin "$T/sp")" ] &&
    has "$T/eq" "iter 3 "
ok $? "loom-mf --epochs=3 is --epochs 3 ($(fin "$T/eq"))"

run_job "$T/pre" "$B/bin/loom-mf" --train "$T/r.train" --test "$T/r.test" --ep 3 --ra=4 --serial
[ $rc -eq 0 ] && [ "$(fin "$T/pre")" = "$(fin "$T/sp")" ]
ok $? "an unambiguous prefix (--ep 3 --ra=4) is the flag"

v=$("$LOOMRUN" --version | sed 's/^loomrun //')
bad=""
for a in $APPS; do [ "$("$B/bin/$a" --version)" = "$a $v" ] || bad="$bad $a"; done
[ -n "$v" ] && [ -z "$bad" ]
ok $? "every app's --version is '<app> $v'${bad:+; wrong:$bad}"

run_job "$T/unk" "$LOOMRUN" -n 2 "$B/bin/loom-lasso" --libsvm x --lambda 1 --bogus=3
[ $rc -eq 2 ] && has "$T/unk" "loom-lasso: unknown or ambiguous flag '--bogus=3'; try --help" &&
    [ "$(grep -c bogus "$T/unk")" -eq 1 ] && ! grep -q "exited with status" "$T/unk"
ok $? "an unknown flag on 2 ranks: named once, exit 2 (rc $rc)"

run_job "$T/set" "$B/bin/loom-lda" --text x --topics 2 --serial=yes
[ $rc -eq 2 ] && has "$T/set" "loom-lda: --serial takes no value"
ok $? "a flag without a value refuses one (exit $rc)"

run_job "$T/rng" "$B/bin/loom-lr" --epochs=0
run_job "$T/num" "$B/bin/loom-w2v" --train x --output y --alpha 0.1x
[ $rc -eq 2 ] && has "$T/rng" "loom-lr: --epochs must be >= 1 \(not '0'\)" &&
    has "$T/num" "loom-w2v: --alpha: '0.1x' is not a number"
ok $? "a value out of range or not a number is named, exit 2"

run_job "$T/pos" "$B/bin/loom-lda" --text x --topics 2 stray
run_job "$T/miss" "$B/bin/loom-lda" --text x --topics
[ $rc -eq 2 ] && has "$T/pos" "unexpected argument 'stray'" && has "$T/miss" "--topics needs a value"
ok $? "a stray argument and a missing value are named"
finish
