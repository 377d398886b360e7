/* See format.h: one formatter per kind of figure. */
#include "core/format.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Compact scale: 12, 12.5 (below 1000 only when not whole), 1.2k, 350k, 1.23M,
 * 4.5G, 1.2T; a value that rounds up to the next unit moves to it (999,960 is
 * 1.00M, not 1000k). */
/* s into out as snprintf(out, n, "%s", s) writes it. */
static char *put(char *out, size_t n, const char *s)
{
    if (!n)
        return out;
    size_t len = strlen(s);
    if (len > n - 1)
        len = n - 1;
    memcpy(out, s, len);
    out[len] = '\0';
    return out;
}

/* r (>= 0, below 10^6, already rounded to dec <= 2 decimals) as
 * snprintf("%s%.*f%s", neg ? "-" : "", dec, r, unit) prints it, without printf:
 * r is the double nearest k / 10^dec for a whole k, so its digits are k's (the
 * compact figures of every visible row, and the rules' messages, were a tenth of a
 * frame after a data change in printf's float conversion). */
static char *fixed(char *out, size_t n, bool neg, double r, int dec, const char *unit)
{
    static const long long p10[] = {1, 10, 100};
    long long p = p10[dec], k = llround(r * (double)p);
    char buf[48], *e = buf + sizeof buf;
    *--e = '\0';
    for (size_t u = strlen(unit); u > 0; u--)
        *--e = unit[u - 1];
    for (int d = 0; d < dec; d++, k /= 10)
        *--e = (char)('0' + k % 10);
    if (dec)
        *--e = '.';
    do {
        *--e = (char)('0' + k % 10);
        k /= 10;
    } while (k);
    if (neg)
        *--e = '-';
    return put(out, n, e);
}

static char *compact(double v, char *out, size_t n)
{
    if (!isfinite(v))
        return put(out, n, "-");
    static const struct { double div; const char *unit; int dec; double below; } steps[] = {
        {1, "", 0, 1e3}, {1e3, "k", 1, 1e4}, {1e3, "k", 0, 1e6}, {1e6, "M", 2, 1e9},
        {1e9, "G", 1, 1e12}, {1e12, "T", 1, 1e15},
    };
    static const double p10[] = {1, 10, 100};
    double a = fabs(v);
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        double scaled = a / steps[i].div;
        double p = p10[steps[i].dec];
        double r = round(scaled * p) / p;
        if (i == 0 && a != floor(a)) {
            r = round(a * 10) / 10;
            if (r < 1e3)
                return fixed(out, n, v < 0 && r > 0, r, r == floor(r) ? 0 : 1, "");
            continue;
        }
        if (r * steps[i].div < steps[i].below)
            return fixed(out, n, v < 0 && r > 0, r, steps[i].dec, steps[i].unit);
    }
    snprintf(out, n, "%s>999T", v < 0 ? "-" : "");
    return out;
}

char *bt_fmt_tokens(double v, char *out, size_t n)
{
    return compact(v, out, n);
}

char *bt_fmt_count(double v, char *out, size_t n)
{
    return compact(isfinite(v) ? round(v) : v, out, n);
}

char *bt_fmt_pct(double v, char *out, size_t n)
{
    if (!isfinite(v))
        snprintf(out, n, "-");
    else if (fabs(v) >= 1e5)
        snprintf(out, n, "%s>99999", v < 0 ? "-" : "");
    else
        snprintf(out, n, "%.1f", bt_round_to(v, 1));
    return out;
}

char *bt_fmt_pct_q(double v, enum bt_quality q, char *out, size_t n)
{
    const char *mark = !isfinite(v)            ? ""
                       : q == BT_QL_UPPER    ? "<"
                       : q == BT_QL_LOWER    ? ">"
                       : q == BT_QL_ESTIMATE ? "~"
                                             : "";
    char pv[BT_FMT_SHORT];
    snprintf(out, n, "%s%s", mark, bt_fmt_pct(v, pv, sizeof pv));
    return out;
}

char *bt_fmt_latency(double ms, char *out, size_t n)
{
    if (!isfinite(ms) || ms < 0) {
        snprintf(out, n, "-");
        return out;
    }
    double s = ms / 1000;
    if (round(ms) < 1000)
        snprintf(out, n, "%.0fms", ms);
    else if (round(s * 10) < 100)
        snprintf(out, n, "%.1fs", s);
    else if (round(s) < 100)
        snprintf(out, n, "%.0fs", s);
    else if (s / 60 < 1000)
        snprintf(out, n, "%.1fm", s / 60);
    else
        snprintf(out, n, ">999m");
    return out;
}

char *bt_fmt_age(double seconds, char *out, size_t n)
{
    if (!isfinite(seconds)) {
        snprintf(out, n, "-");
        return out;
    }
    double a = fabs(seconds);
    const char *sign = seconds < 0 ? "-" : "";
    long long s = (long long)(a > 9e15 ? 9e15 : round(a));
    if (s < 60)
        snprintf(out, n, "%s%llds", sign, s);
    else if (s < 3600)
        snprintf(out, n, "%s%lldm", sign, s / 60);
    else if (s < 86400)
        snprintf(out, n, "%s%lldh%02lldm", sign, s / 3600, s % 3600 / 60);
    else if (s < 100 * 86400LL)
        snprintf(out, n, "%s%lldd%02lldh", sign, s / 86400, s % 86400 / 3600);
    else
        snprintf(out, n, "%s%lldd", sign, s / 86400);
    return out;
}

char *bt_fmt_grouped(double v, char *out, size_t n)
{
    char p[BT_FMT_LONG], tmp[2 * BT_FMT_LONG];
    bt_fmt_plain(v, 6, p, sizeof p); /* "-1234567.25", "10000000", "" */
    if (!isfinite(v) || fabs(v) >= 1e18) {
        snprintf(out, n, "%s", p);
        return out;
    }
    const char *s = p;
    size_t o = 0;
    if (*s == '-')
        tmp[o++] = *s++;
    size_t whole = strcspn(s, ".");
    for (size_t i = 0; i < whole; i++) {
        if (i && (whole - i) % 3 == 0)
            tmp[o++] = ',';
        tmp[o++] = s[i];
    }
    snprintf(tmp + o, sizeof tmp - o, "%s", s + whole);
    snprintf(out, n, "%s", tmp);
    return out;
}

double bt_round_to(double v, int decimals)
{
    if (!isfinite(v) || fabs(v) >= 1e15)
        return v;
    double k = 1;
    for (int i = 0; i < decimals && i < 6; i++)
        k *= 10;
    return round(v * k) / k + 0.0;
}

char *bt_fmt_plain(double v, int decimals, char *out, size_t n)
{
    if (!isfinite(v)) { /* unknown: empty (an export's missing signals, by the million) */
        if (n)
            out[0] = '\0';
        return out;
    }
    if (decimals < 0)
        decimals = 0;
    if (decimals > 6)
        decimals = 6;
    if (fabs(v) >= 1e21) { /* beyond the digits a double keeps; still no exponent */
        snprintf(out, n, "%.0f", v);
        return out;
    }
    /* A whole number (or one rounded to 0 decimals, as printf rounds: to nearest,
     * ties to even) below 2^53 prints as its digits without printf: the same text,
     * and export writes millions of them. */
    double w = decimals == 0 ? nearbyint(v) : v;
    if (fabs(w) < 9007199254740992.0 && w == trunc(w) && n >= 24) {
        unsigned long long u = (unsigned long long)fabs(w);
        char d[24];
        int k = 0;
        do {
            d[k++] = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        size_t o = 0;
        if (w < 0)
            out[o++] = '-';
        while (k)
            out[o++] = d[--k];
        out[o] = '\0';
        return out;
    }
    /* A value that is exactly the double nearest q / 10^decimals (what bt_round_to
     * returns) prints as q's digits with the point put in: printf's text, since the
     * double is within half an ulp of q / 10^decimals, far inside half a unit of the
     * last decimal below 2^53 / 10^decimals. */
    static const double pow10[7] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
    double k = pow10[decimals], q = nearbyint(v * k);
    if (n >= 32 && fabs(q) < 9007199254740992.0 / 16 && q / k == v) {
        unsigned long long u = (unsigned long long)fabs(q);
        char d[24];
        int nd = 0;
        do {
            d[nd++] = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        while (nd <= decimals)
            d[nd++] = '0'; /* 0.05: at least one whole digit */
        int skip = 0; /* trailing zeros of the fraction dropped, as below */
        while (skip < decimals && d[skip] == '0')
            skip++;
        size_t o = 0;
        if (q < 0)
            out[o++] = '-';
        for (int i = nd - 1; i >= decimals; i--)
            out[o++] = d[i];
        if (skip < decimals) {
            out[o++] = '.';
            for (int i = decimals - 1; i >= skip; i--)
                out[o++] = d[i];
        }
        out[o] = '\0';
        return out;
    }
    snprintf(out, n, "%.*f", decimals, v);
    char *dot = strchr(out, '.');
    if (dot) {
        char *e = out + strlen(out) - 1;
        while (e > dot && *e == '0')
            *e-- = '\0';
        if (e == dot)
            *e = '\0';
    }
    if (!strcmp(out, "-0"))
        snprintf(out, n, "0");
    return out;
}
