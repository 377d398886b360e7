/* Quota matching: which quota of a listing a route draws from, by UsageMetric,
 * then code, then name, through an index built once per listing, so a poll over
 * R routes and Q quotas costs O(R + Q), not O(R x Q). */
#include "collectors/quotas.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *bt_quotas_route_model(const struct bt_route *r)
{
    return r->base_model[0] ? r->base_model : r->model;
}

size_t bt_quotas_route_kinds(const struct bt_route *r, const enum bt_quota_kind **kinds)
{
    /* input_tpm / output_tpm on runtime: split quotas ("... model inference input
     * tokens per minute for X"), two sides like mantle's, where an account lists them */
    static const enum bt_quota_kind runtime[] = {BT_Q_TPM,          BT_Q_RPM,       BT_Q_TPD,
                                                 BT_Q_CONCURRENT,   BT_Q_TPD_ACCOUNT,
                                                 BT_Q_INPUT_TPM,    BT_Q_OUTPUT_TPM};
    static const enum bt_quota_kind mantle[] = {BT_Q_INPUT_TPM, BT_Q_OUTPUT_TPM};
    if (r->endpoint == BT_EP_MANTLE) {
        *kinds = mantle;
        return BT_ARRAY_LEN(mantle);
    }
    *kinds = runtime;
    /* Provisioned Throughput is model-unit capacity: no TPM, RPM or daily quota */
    return r->inference == BT_INF_PROVISIONED ? 0 : BT_ARRAY_LEN(runtime);
}

/* ---- the index ------------------------------------------------------------ */

struct qinfo {
    int nread;                 /* readings of the name: 0 none, 1, 2 (two rows disagree) */
    struct bt_qname rd[2];
    int um_kind;               /* the UsageMetric's quota kind, -1: no usable UsageMetric */
    int um_inf;                /* its inference type, -1: every standard one */
    char um_context[16];
    const char *um_bare;       /* its model without profile prefix or latency suffix */
    bool um_mantle;            /* its namespace is AWS/BedrockMantle */
};

struct ixent {
    uint64_t h;
    int q, rd;                 /* quota index; reading (0, 1), -1 UsageMetric, -2 code */
    int next;
};

struct bt_quota_index {
    const struct bt_sq_list *l;
    const struct bt_quota_table *t;
    struct qinfo *qi;
    char (*bare)[192];
    int *bucket;
    size_t mask;
    struct ixent *e;
    int ne;
    unsigned long cmp;
    /* the model keys of the model asked last (a route is matched kind by kind, each
     * by name: its keys were 7 % of check's instructions, computed for every kind):
     * they depend on the model ID and t alone */
    char keys_model[256];
    uint64_t keys[BT_QKEYS];
    int nkeys;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return mix(h, 0xff);
}

enum { TAG_NAME = 1, TAG_UM, TAG_CODE, TAG_ACCOUNT };

static uint64_t slot_key(int tag, int kind, int inf, const char *context, uint64_t label)
{
    uint64_t h = mix(mix(mix(1469598103934665603ull, (uint64_t)tag), (uint64_t)kind),
                     (uint64_t)(inf + 8));
    return mix(mix_str(h, context), label);
}

static void ix_add(struct bt_quota_index *ix, uint64_t h, int q, int rd)
{
    struct ixent *e = &ix->e[ix->ne];
    e->h = h;
    e->q = q;
    e->rd = rd;
    size_t b = (size_t)(h & ix->mask);
    e->next = ix->bucket[b];
    ix->bucket[b] = ix->ne++;
}

static bool has_word(const char *name, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = name; *p; p++)
        if (strncasecmp(p, word, n) == 0)
            return true;
    return false;
}

/* Lower-case letters and digits of s: "Tokens per minute" and "TokensPerMinute"
 * both read "tokensperminute". */
static void compact(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (; *s && k + 1 < n; s++)
        if (isalnum((unsigned char)*s))
            out[k++] = (char)tolower((unsigned char)*s);
    out[k] = '\0';
}

/* A quota whose name follows no row but whose UsageMetric names a model: what its
 * name or metric name says it is (-1: nothing we use). */
static int classify_kind(const char *name, const char *metric, bool mantle)
{
    char c[320], m[80];
    compact(name, c, sizeof c);
    compact(metric, m, sizeof m);
    static const struct {
        const char *word;
        int kind;
        bool mantle;
    } words[] = {
        {"input", BT_Q_INPUT_TPM, true},
        {"output", BT_Q_OUTPUT_TPM, true},
        /* runtime's split quotas: two sides, never the combined TPM quota */
        {"inputtokensperminute", BT_Q_INPUT_TPM, false},
        {"outputtokensperminute", BT_Q_OUTPUT_TPM, false},
        {"concurrent", BT_Q_CONCURRENT, false},
        {"requestsperminute", BT_Q_RPM, false},
        {"rpm", BT_Q_RPM, false},
        {"tokensperday", BT_Q_TPD, false},
        {"tpd", BT_Q_TPD, false},
        {"tokensperminute", BT_Q_TPM, false},
        {"tpm", BT_Q_TPM, false},
    };
    /* the name first; the metric name when the name says nothing */
    const char *src[] = {c, m};
    for (size_t s = 0; s < BT_ARRAY_LEN(src); s++)
        for (size_t i = 0; i < BT_ARRAY_LEN(words); i++)
            if (words[i].mantle == mantle && strstr(src[s], words[i].word))
                return words[i].kind;
    return -1;
}

static const char *bare_model(const char *id, char *out, size_t n)
{
    bt_strlcpy(out, bt_profile_strip(id), n);
    char *lo = strstr(out, "+latency-optimized");
    if (lo && !lo[18])
        *lo = '\0';
    return out;
}

struct bt_quota_index *bt_quota_index_build(const struct bt_sq_list *l,
                                            const struct bt_quota_table *t)
{
    struct bt_quota_index *ix = bt_xcalloc(1, sizeof *ix);
    ix->l = l;
    ix->t = t;
    ix->nkeys = -1; /* none asked yet */
    int n = l->n;
    ix->qi = bt_xcalloc((size_t)(n ? n : 1), sizeof *ix->qi);
    ix->bare = bt_xcalloc((size_t)(n ? n : 1), sizeof *ix->bare);
    /* at most 2 readings x BT_QKEYS label keys + one code entry per quota */
    size_t cap = (size_t)n * (2 * BT_QKEYS + 2) + 1, nb = 16;
    while (nb < cap)
        nb <<= 1;
    ix->mask = nb - 1;
    ix->bucket = bt_xcalloc(nb, sizeof *ix->bucket);
    for (size_t b = 0; b < nb; b++)
        ix->bucket[b] = -1;
    ix->e = bt_xcalloc(cap, sizeof *ix->e);
    for (int i = 0; i < n; i++) {
        const struct bt_sq_quota *q = &l->q[i];
        struct qinfo *qi = &ix->qi[i];
        qi->nread = bt_quotas_parse_name(t, q->name, qi->rd);
        qi->um_kind = -1;
        ix_add(ix, mix_str(slot_key(TAG_CODE, 0, 0, "", 0), q->code), i, -2);
        if (q->um_model[0]) {
            bool mantle = strcmp(q->um_ns, "AWS/BedrockMantle") == 0;
            int kind = qi->nread == 1 ? (int)qi->rd[0].kind : classify_kind(q->name, q->um_metric, mantle);
            bool mantle_kind = kind == BT_Q_INPUT_TPM || kind == BT_Q_OUTPUT_TPM;
            /* mantle quotas are input or output; runtime's may be split too */
            if (kind >= 0 && (!mantle || mantle_kind)) {
                qi->um_kind = kind;
                qi->um_mantle = mantle;
                qi->um_bare = bare_model(q->um_model, ix->bare[i], sizeof ix->bare[i]);
                if (qi->nread == 1) {
                    qi->um_inf = qi->rd[0].inference;
                    bt_strlcpy(qi->um_context, qi->rd[0].context, sizeof qi->um_context);
                } else {
                    qi->um_inf = mantle ? -1 : (int)bt_inference_from_model(q->um_model);
                    if (has_word(q->name, "1M Context"))
                        bt_strlcpy(qi->um_context, "1m", sizeof qi->um_context);
                }
                uint64_t lk = mix_str(0, qi->um_bare);
                ix_add(ix, slot_key(TAG_UM, kind, qi->um_inf, qi->um_context, lk), i, -1);
                continue; /* its UsageMetric says which model: never matched by name */
            }
        }
        for (int r = 0; r < qi->nread; r++) {
            const struct bt_qname *rd = &qi->rd[r];
            if (rd->inference == BT_QROW_ACCOUNT) {
                ix_add(ix, slot_key(TAG_ACCOUNT, (int)rd->kind, 0, "", 0), i, r);
                continue;
            }
            uint64_t keys[BT_QKEYS];
            int nk = bt_quotas_display_keys(rd->model, keys);
            for (int k = 0; k < nk; k++)
                ix_add(ix, slot_key(TAG_NAME, (int)rd->kind, rd->inference, rd->context, keys[k]),
                       i, r);
        }
    }
    return ix;
}

void bt_quota_index_free(struct bt_quota_index *ix)
{
    if (!ix)
        return;
    free(ix->qi);
    free(ix->bare);
    free(ix->bucket);
    free(ix->e);
    free(ix);
}

unsigned long bt_quota_index_comparisons(const struct bt_quota_index *ix)
{
    return ix ? ix->cmp : 0;
}

/* ---- lookups ---------------------------------------------------------------- */

struct found {
    int q;                     /* -1 none, -2 ambiguous */
    char *why;
    size_t whylen;
};

static void take(struct bt_quota_index *ix, struct found *f, int q)
{
    if (f->q == -2 || f->q == q)
        return;
    if (f->q >= 0 && ix->l->q[f->q].value != ix->l->q[q].value) {
        /* two different answers: unknown beats a wrong guess */
        if (f->why)
            snprintf(f->why, f->whylen, "two quotas name this model: %s (%g) and %s (%g)",
                     ix->l->q[f->q].code, ix->l->q[f->q].value, ix->l->q[q].code,
                     ix->l->q[q].value);
        f->q = -2;
        return;
    }
    if (f->q < 0)
        f->q = q;
}

static bool standard_inference(const struct bt_route *r)
{
    return r->inference == BT_INF_ON_DEMAND || r->inference == BT_INF_CROSS_REGION ||
           r->inference == BT_INF_GLOBAL;
}

/* The inference types a route's quota can be listed under: its own, then "every
 * standard type" (-1); a scoped quota wins over a scope-less one. */
static int route_infs(const struct bt_route *r, int out[2])
{
    out[0] = (int)r->inference;
    out[1] = -1;
    return standard_inference(r) ? 2 : 1;
}

static void by_usage_metric(struct bt_quota_index *ix, const struct bt_route *r,
                            enum bt_quota_kind k, struct found *f)
{
    char bare[192];
    bare_model(bt_quotas_route_model(r), bare, sizeof bare);
    uint64_t lk = mix_str(0, bare);
    int infs[2], ni = route_infs(r, infs);
    for (int j = 0; j < ni && f->q == -1; j++) {
        uint64_t h = slot_key(TAG_UM, (int)k, infs[j], r->context, lk);
        for (int e = ix->bucket[h & ix->mask]; e >= 0; e = ix->e[e].next) {
            const struct ixent *x = &ix->e[e];
            ix->cmp++;
            if (x->h != h || x->rd != -1)
                continue;
            const struct qinfo *qi = &ix->qi[x->q];
            if (qi->um_kind == (int)k && qi->um_inf == infs[j] &&
                qi->um_mantle == (r->endpoint == BT_EP_MANTLE) &&
                !strcmp(qi->um_context, r->context) && !strcmp(qi->um_bare, bare))
                take(ix, f, x->q);
        }
    }
}

static int by_code(struct bt_quota_index *ix, const char *code)
{
    uint64_t h = mix_str(slot_key(TAG_CODE, 0, 0, "", 0), code);
    for (int e = ix->bucket[h & ix->mask]; e >= 0; e = ix->e[e].next) {
        const struct ixent *x = &ix->e[e];
        ix->cmp++;
        if (x->h != h || x->rd != -2)
            continue;
        if (!strcmp(ix->l->q[x->q].code, code))
            return x->q;
    }
    return -1;
}

/* Does this reading name route r's quota of kind k? */
static bool reading_fits(const struct bt_qname *q, const struct bt_route *r,
                         enum bt_quota_kind k, const struct bt_quota_table *t)
{
    bool mantle_kind = q->kind == BT_Q_INPUT_TPM || q->kind == BT_Q_OUTPUT_TPM;
    bool mantle = r->endpoint == BT_EP_MANTLE;
    if (q->kind != k || (mantle && !mantle_kind))
        return false;
    /* input/output rows: mantle's are scope-less ("any"), runtime's split quotas are
     * scoped to an inference type; neither endpoint takes the other's */
    if (mantle_kind && (mantle ? q->inference >= 0 : q->inference < 0))
        return false;
    if (q->inference == BT_QROW_ACCOUNT) /* the cross-model daily quota's routes */
        return bt_route_runtime_quotas(r);
    if (q->inference >= 0 ? q->inference != (int)r->inference : !standard_inference(r))
        return false;
    if (strcmp(q->context, r->context) != 0)
        return false;
    return bt_quotas_model_matches(bt_quotas_route_model(r), q->model, t);
}

/* One slot of the name index: the quotas whose reading names r's model. */
static void name_slot(struct bt_quota_index *ix, const struct bt_route *r, enum bt_quota_kind k,
                      uint64_t h, struct found *f)
{
    for (int e = ix->bucket[h & ix->mask]; e >= 0 && f->q != -2; e = ix->e[e].next) {
        const struct ixent *x = &ix->e[e];
        ix->cmp++; /* every entry looked at counts, the chain's others too */
        if (x->h != h || x->rd < 0)
            continue;
        const struct qinfo *qi = &ix->qi[x->q];
        if (!reading_fits(&qi->rd[x->rd], r, k, ix->t))
            continue;
        if (qi->nread == 2) {
            if (f->why)
                snprintf(f->why, f->whylen,
                         "quota %s \"%.120s\" reads two ways (quota-names.conf lines %d and %d)",
                         ix->l->q[x->q].code, ix->l->q[x->q].name, qi->rd[0].line,
                         qi->rd[1].line);
            f->q = -2;
            return;
        }
        take(ix, f, x->q);
    }
}

static void by_name(struct bt_quota_index *ix, const struct bt_route *r, enum bt_quota_kind k,
                    struct found *f)
{
    if (k == BT_Q_TPD_ACCOUNT) {
        name_slot(ix, r, k, slot_key(TAG_ACCOUNT, (int)k, 0, "", 0), f);
        return;
    }
    const char *model = bt_quotas_route_model(r);
    size_t ml = strlen(model);
    uint64_t own[BT_QKEYS];
    const uint64_t *keys = own;
    int nk;
    if (ml < sizeof ix->keys_model && ix->nkeys >= 0 && !strcmp(ix->keys_model, model)) {
        keys = ix->keys;
        nk = ix->nkeys;
    } else if (ml < sizeof ix->keys_model) {
        ix->nkeys = nk = bt_quotas_model_keys(model, ix->t, ix->keys);
        memcpy(ix->keys_model, model, ml + 1);
        keys = ix->keys;
    } else {
        nk = bt_quotas_model_keys(model, ix->t, own);
    }
    int infs[2], ni = route_infs(r, infs);
    /* the route's own inference type first: a scope-less row only when no scoped one
     * names the model */
    for (int j = 0; j < ni && f->q == -1; j++)
        for (int i = 0; i < nk; i++)
            name_slot(ix, r, k, slot_key(TAG_NAME, (int)k, infs[j], r->context, keys[i]), f);
}

int bt_quota_index_match(struct bt_quota_index *ix, const struct bt_route *r,
                         enum bt_quota_kind k, enum bt_quota_match *by, char *why, size_t whylen)
{
    if (why && whylen)
        why[0] = '\0';
    *by = BT_QM_NONE;
    struct found f = {-1, why, whylen};
    by_usage_metric(ix, r, k, &f);
    if (f.q != -1) {
        *by = f.q >= 0 ? BT_QM_USAGE_METRIC : BT_QM_NONE;
        return f.q;
    }
    enum bt_quota_kind binding = r->endpoint == BT_EP_MANTLE ? BT_Q_INPUT_TPM : BT_Q_TPM;
    if (k == binding && r->quota_code[0]) {
        /* a configured code is the user's word: no name is tried instead */
        int q = by_code(ix, r->quota_code);
        *by = q >= 0 ? BT_QM_CODE : BT_QM_NONE;
        return q;
    }
    by_name(ix, r, k, &f);
    if (f.q != -1) {
        *by = f.q >= 0 ? BT_QM_NAME : BT_QM_NONE;
        return f.q;
    }
    /* learned: the code this quota had at an earlier listing (its name may have drifted) */
    const struct bt_quota *had = &r->quota[k];
    if (had->code[0] && !isnan(had->value) &&
        (had->source == BT_QS_SERVICE_QUOTAS || had->source == BT_QS_DEFAULT)) {
        int q = by_code(ix, had->code);
        if (q >= 0) {
            *by = BT_QM_CODE;
            return q;
        }
    }
    return -1;
}

int bt_quotas_match(const struct bt_route *r, enum bt_quota_kind k, const struct bt_sq_list *l,
                    const struct bt_quota_table *t, char *why, size_t whylen)
{
    struct bt_quota_index *ix = bt_quota_index_build(l, t);
    enum bt_quota_match by;
    int q = bt_quota_index_match(ix, r, k, &by, why, whylen);
    bt_quota_index_free(ix);
    return q;
}

double bt_quotas_effective_value(const struct bt_route *r, enum bt_quota_kind k,
                                 const struct bt_sq_quota *q)
{
    /* the daily quota's own name says it is doubled for cross-region calls */
    if (k == BT_Q_TPD && (r->inference == BT_INF_CROSS_REGION || r->inference == BT_INF_GLOBAL) &&
        has_word(q->name, "doubled for cross-region"))
        return q->value * 2;
    return q->value;
}

