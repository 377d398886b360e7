/* The series list every Prometheus parser fills (collectors/promtext.h): the
 * document, its lookup tables, names and values as the formats share them, and
 * histogram_quantile. */
#include "collectors/prom_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"

/* Open addressing over indices; idx1 = index + 1 so a zeroed slot is empty. */
struct bt_prom_slot {
    uint64_t h;
    int idx1;
};

void bt_prom_init(struct bt_prom_doc *d)
{
    memset(d, 0, sizeof *d);
}

void bt_promdoc_free_labels(struct bt_prom_label *l, int n)
{
    for (int i = 0; i < n; i++) {
        free(l[i].name);
        free(l[i].value);
    }
    free(l);
}

void bt_prom_free(struct bt_prom_doc *d)
{
    for (int i = 0; i < d->nfamilies; i++) {
        free(d->families[i].name);
        free(d->families[i].help);
        free(d->families[i].unit);
    }
    for (int i = 0; i < d->nseries; i++) {
        if (d->series[i].shared)
            continue;
        free(d->series[i].name);
        bt_promdoc_free_labels(d->series[i].labels, d->series[i].nlabels);
    }
    free(d->families);
    free(d->series);
    free(d->fam_idx);
    free(d->ser_idx);
    bt_prom_init(d);
}

enum bt_prom_format bt_prom_format_of(const char *ct)
{
    return ct && strstr(ct, "application/openmetrics-text") ? BT_PROM_OPENMETRICS : BT_PROM_TEXT;
}

static const char *const type_names[] = {"untyped", "counter", "gauge", "histogram", "summary",
                                         "gaugehistogram", "stateset", "info"};

const char *bt_prom_type_name(enum bt_prom_type t)
{
    return (unsigned)t < BT_ARRAY_LEN(type_names) ? type_names[t] : "?";
}

const char *bt_prom_label(const struct bt_prom_series *s, const char *name)
{
    for (int i = 0; i < s->nlabels; i++)
        if (strcmp(s->labels[i].name, name) == 0)
            return s->labels[i].value;
    return NULL;
}

enum bt_prom_type bt_prom_series_type(const struct bt_prom_doc *d, const struct bt_prom_series *s)
{
    return s->family >= 0 && s->family < d->nfamilies ? d->families[s->family].type
                                                      : BT_PROM_UNTYPED;
}

/* ---- hashing ---------------------------------------------------------- */

static uint64_t fnv(const char *s, uint64_t h)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

#define FNV_BASIS 14695981039346656037ULL

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

/* Label order does not make a different series, so label hashes are summed. */
uint64_t bt_promdoc_series_hash(const char *name, const struct bt_prom_label *l, int n)
{
    uint64_t h = mix(fnv(name, FNV_BASIS));
    for (int i = 0; i < n; i++)
        h += mix(fnv(l[i].value, fnv("\xff", fnv(l[i].name, FNV_BASIS))));
    return h ? h : 1; /* 0 is BT_PROMDOC_UNINDEXED */
}

static bool same_series(const struct bt_prom_series *a, const char *name,
                        const struct bt_prom_label *l, int n)
{
    if (a->nlabels != n || strcmp(a->name, name) != 0)
        return false;
    for (int i = 0; i < n; i++) {
        const char *v = bt_prom_label(a, l[i].name);
        if (!v || strcmp(v, l[i].value) != 0)
            return false;
    }
    return true;
}

static void slots_grow(struct bt_prom_slot **tab, size_t *cap, int n)
{
    if ((size_t)(n + 1) * 2 <= *cap)
        return;
    size_t ncap = *cap ? *cap * 2 : 64;
    struct bt_prom_slot *nt = bt_xcalloc(ncap, sizeof *nt);
    for (size_t i = 0; i < *cap; i++) {
        if (!(*tab)[i].idx1)
            continue;
        size_t j = (*tab)[i].h & (ncap - 1);
        while (nt[j].idx1)
            j = (j + 1) & (ncap - 1);
        nt[j] = (*tab)[i];
    }
    free(*tab);
    *tab = nt;
    *cap = ncap;
}

static void slots_put(struct bt_prom_slot *tab, size_t cap, uint64_t h, int idx)
{
    size_t j = h & (cap - 1);
    while (tab[j].idx1)
        j = (j + 1) & (cap - 1);
    tab[j].h = h;
    tab[j].idx1 = idx + 1;
}

static uint64_t fnv_n(const char *s, size_t n)
{
    uint64_t h = FNV_BASIS;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

int bt_promdoc_family_find(const struct bt_prom_doc *d, const char *name, size_t len)
{
    if (!d->fam_cap)
        return -1;
    uint64_t h = fnv_n(name, len);
    for (size_t j = h & (d->fam_cap - 1); d->fam_idx[j].idx1; j = (j + 1) & (d->fam_cap - 1)) {
        const char *fn = d->families[d->fam_idx[j].idx1 - 1].name;
        if (d->fam_idx[j].h == h && strncmp(fn, name, len) == 0 && fn[len] == '\0')
            return d->fam_idx[j].idx1 - 1;
    }
    return -1;
}

int bt_promdoc_family_add(struct bt_prom_doc *d, const char *name, int line)
{
    if (d->nfamilies == d->families_cap) {
        d->families_cap = d->families_cap ? d->families_cap * 2 : 16;
        d->families = bt_xrealloc(d->families, (size_t)d->families_cap * sizeof *d->families);
    }
    int i = d->nfamilies++;
    d->families[i] = (struct bt_prom_family){.name = bt_xstrdup(name), .line = line};
    slots_grow(&d->fam_idx, &d->fam_cap, d->nfamilies);
    slots_put(d->fam_idx, d->fam_cap, fnv_n(name, strlen(name)), i);
    return i;
}

int bt_promdoc_series_find(const struct bt_prom_doc *d, uint64_t h, const char *name,
                       const struct bt_prom_label *l, int n)
{
    if (!d->ser_cap)
        return -1;
    for (size_t j = h & (d->ser_cap - 1); d->ser_idx[j].idx1; j = (j + 1) & (d->ser_cap - 1))
        if (d->ser_idx[j].h == h && same_series(&d->series[d->ser_idx[j].idx1 - 1], name, l, n))
            return d->ser_idx[j].idx1 - 1;
    return -1;
}

/* Takes ownership of name and labels. */
int bt_promdoc_series_add(struct bt_prom_doc *d, char *name, struct bt_prom_label *l, int n,
                      uint64_t h)
{
    if (d->nseries == d->series_cap) {
        d->series_cap = d->series_cap ? d->series_cap * 2 : 64;
        d->series = bt_xrealloc(d->series, (size_t)d->series_cap * sizeof *d->series);
    }
    int i = d->nseries++;
    d->series[i] = (struct bt_prom_series){.name = name, .family = -1, .labels = l, .nlabels = n};
    if (h != BT_PROMDOC_UNINDEXED) {
        slots_grow(&d->ser_idx, &d->ser_cap, d->nseries);
        slots_put(d->ser_idx, d->ser_cap, h, i);
    }
    return i;
}

int bt_promdoc_point_add(struct bt_prom_doc *d, int of)
{
    struct bt_prom_series *o = &d->series[of];
    int i = bt_promdoc_series_add(d, o->name, o->labels, o->nlabels, BT_PROMDOC_UNINDEXED);
    o = &d->series[of]; /* series may have moved */
    d->series[i].family = o->family;
    d->series[i].shared = true;
    return i;
}

bool bt_promdoc_name_start(int c)
{
    return isalpha(c) || c == '_' || c == ':';
}

bool bt_promdoc_name_char(int c)
{
    return isalnum(c) || c == '_' || c == ':';
}

bool bt_promdoc_ieq(const char *a, size_t n, const char *b)
{
    return strlen(b) == n && strncasecmp(a, b, n) == 0;
}

/* A sample value: decimal float, or [+-]Inf/Infinity, NaN (any case). */
bool bt_promdoc_value(const char *s, size_t n, bool allow_special, double *out)
{
    const char *t = s;
    size_t m = n;
    double sign = 1;
    if (m && (*t == '+' || *t == '-')) {
        sign = *t == '-' ? -1 : 1;
        t++, m--;
    }
    if (bt_promdoc_ieq(t, m, "inf") || bt_promdoc_ieq(t, m, "infinity")) {
        *out = sign * INFINITY;
        return allow_special;
    }
    if (bt_promdoc_ieq(t, m, "nan")) {
        *out = NAN;
        return allow_special;
    }
    if (n == 0 || n > 64)
        return false;
    bool digit = false;
    for (size_t i = 0; i < n; i++) {
        if (isdigit((unsigned char)s[i]))
            digit = true;
        else if (!strchr(".eE+-", s[i]))
            return false;
    }
    if (!digit)
        return false;
    char tmp[72];
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    char *e;
    errno = 0;
    double v = strtod(tmp, &e);
    if (*e || (errno == ERANGE && isinf(v)))
        return false;
    *out = v;
    return true;
}

/* ---- histogram quantile ------------------------------------------------ */

static int bucket_cmp(const void *a, const void *b)
{
    double x = ((const struct bt_prom_bucket *)a)->le, y = ((const struct bt_prom_bucket *)b)->le;
    return x < y ? -1 : x > y;
}

double bt_prom_quantile(double q, struct bt_prom_bucket *b, size_t n)
{
    if (isnan(q))
        return NAN;
    if (q < 0)
        return -INFINITY;
    if (q > 1)
        return INFINITY;
    if (n < 2)
        return NAN;
    qsort(b, n, sizeof *b, bucket_cmp);
    if (!(isinf(b[n - 1].le) && b[n - 1].le > 0))
        return NAN;
    /* as Prometheus: merge equal bounds, and force counts to be monotonic */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && b[m - 1].le == b[i].le) {
            b[m - 1].count += b[i].count;
            continue;
        }
        b[m++] = b[i];
    }
    for (size_t i = 1; i < m; i++)
        if (b[i].count < b[i - 1].count)
            b[i].count = b[i - 1].count;
    if (m < 2)
        return NAN;
    double total = b[m - 1].count;
    if (!(total > 0))
        return NAN;
    double rank = q * total;
    size_t k = 0;
    while (k < m - 1 && b[k].count < rank)
        k++;
    if (k == m - 1)
        return b[m - 2].le;
    if (k == 0 && b[0].le <= 0)
        return b[0].le;
    double start = 0, end = b[k].le, count = b[k].count;
    if (k > 0) {
        start = b[k - 1].le;
        count -= b[k - 1].count;
        rank -= b[k - 1].count;
    }
    if (count <= 0)
        return start;
    return start + (end - start) * (rank / count);
}
