# meanci.awk - mean and 95 % confidence half-width (Student t) per key, for
# the scripts that sweep seeds (scripts/stellar-fig*.sh).  Input: lines of
# tab-separated fields, the key first, then the values of one run; keys
# keep the order they first appear in.  Output: the markdown table rows
# "| key (n=N) | mean +- half-width | ...", each value times its entry of
# `scales` (comma-separated, default 1) with its entry of `precs` decimals
# (default 1); a value "-" prints "-" (none for that run).
#   awk -F'\t' -f scripts/meanci.awk -v scales=1e-3,1 -v precs=2,1 runs.tsv
function t95(n) {
    if (n >= 2 && n <= 10) return tq[n]
    return 1.96
}
BEGIN {
    # tq[n]: Student t at 97.5 % for n samples (n - 1 degrees of freedom)
    split("0,12.706,4.303,3.182,2.776,2.571,2.447,2.365,2.306,2.262", tq, ",")
    ns = split(scales, sc, ","); np = split(precs, pr, ",")
}
{
    k = $1
    if (!(k in n)) order[++no] = k
    n[k]++
    if (NF > nf) nf = NF
    for (i = 2; i <= NF; i++)
        if ($i != "-") { c[k, i]++; s[k, i] += $i; q[k, i] += $i * $i }
}
END {
    for (j = 1; j <= no; j++) {
        k = order[j]
        printf "| %s (n=%d)", k, n[k]
        for (i = 2; i <= nf; i++) {
            if (!c[k, i]) { printf " | -"; continue }
            f = i - 1 <= ns && sc[i - 1] != "" ? sc[i - 1] : 1
            d = i - 1 <= np && pr[i - 1] != "" ? pr[i - 1] : 1
            m = s[k, i] / c[k, i]
            v = c[k, i] > 1 ? (q[k, i] - c[k, i] * m * m) / (c[k, i] - 1) : 0
            if (v < 0) v = 0
            printf " | %.*f +- %.*f", d, m * f, d, t95(c[k, i]) * sqrt(v / c[k, i]) * f
        }
        printf " |\n"
    }
}
