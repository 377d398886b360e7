/* The INI parser's index of the text (core/config_int.h): every [route NAME] line,
 * the keys already set (a key set twice is refused, naming both lines), the routes
 * by section name, and the route sections' checks once the text is read. */
#include "core/config_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

static size_t ix_hash(const char *k, size_t len)
{
    size_t h = 14695981039346656037u; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)k[i]) * 1099511628211u;
    return h;
}

static struct ix_slot *ix_find(const struct name_ix *ix, const char *k, size_t len)
{
    if (!ix->cap)
        return NULL;
    for (size_t i = ix_hash(k, len) & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
        struct ix_slot *sl = &ix->slot[i];
        if (!sl->key || (sl->len == len && !memcmp(sl->key, k, len)))
            return sl;
    }
}

/* The slot of k, added (a = b = 0) when new. */
static struct ix_slot *ix_get(struct name_ix *ix, const char *k, size_t len)
{
    if (2 * (ix->n + 1) > ix->cap) {
        struct name_ix big = {.cap = ix->cap ? 2 * ix->cap : 64};
        big.slot = bt_xcalloc(big.cap, sizeof *big.slot);
        for (size_t i = 0; i < ix->cap; i++)
            if (ix->slot[i].key)
                *ix_find(&big, ix->slot[i].key, ix->slot[i].len) = ix->slot[i];
        big.n = ix->n;
        free(ix->slot);
        *ix = big;
    }
    struct ix_slot *sl = ix_find(ix, k, len);
    if (!sl->key) {
        *sl = (struct ix_slot){.key = k, .len = len};
        ix->n++;
    }
    return sl;
}

static void ix_free(struct name_ix *ix)
{
    free(ix->slot);
    *ix = (struct name_ix){0};
}

/* A name as section lines are matched: trailing blanks do not count. */
static size_t name_len(const char *k, size_t len)
{
    while (len && (k[len - 1] == ' ' || k[len - 1] == '\t'))
        len--;
    return len;
}

/* Every "[route NAME]" line of the text (blanks allowed around "route" and the
 * name): the first and second line of each name. *toolong: the first section line
 * longer than inih reads (0: none). */
static void index_sections(struct name_ix *ix, const char *text, int *toolong)
{
    int line = 1;
    *toolong = 0;
    for (const char *p = text; *p; line++) {
        const char *q = p;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q == '[') {
            q++;
            const char *close = q;
            while (*close && *close != ']' && *close != '\n')
                close++;
            if (*close == ']' && close - q > INI_SECTION_MAX && !*toolong)
                *toolong = line;
            while (*q == ' ')
                q++;
            if (!strncmp(q, "route", 5)) {
                q += 5;
                while (*q == ' ')
                    q++;
                const char *e = q;
                while (*e && *e != ']' && *e != '\n')
                    e++;
                size_t len = name_len(q, (size_t)(e - q));
                if (*e == ']' && len) {
                    struct ix_slot *sl = ix_get(ix, q, len);
                    if (!sl->a)
                        sl->a = line;
                    else if (!sl->b)
                        sl->b = line;
                }
            }
        }
        const char *nl = strchr(p, '\n');
        if (!nl)
            break;
        p = nl + 1;
    }
}

/* The route sections of the text, indexed on first use and kept: a [route NAME]
 * written twice asks for every key of its second copy, and indexing the text each
 * time made one long config quadratic (fuzz_config_routes found it). */
static const struct name_ix *ctx_sections(struct parse_ctx *p)
{
    if (!p->sections_built) {
        index_sections(&p->sections, p->text, &p->sections_toolong);
        p->sections_built = true;
    }
    return &p->sections;
}

/* The section as keys are told apart: "route NAME" by the route's name alone. */
static void section_id(struct bt_buf *b, const char *section, size_t len)
{
    if (len >= 6 && !strncmp(section, "route ", 6)) {
        size_t i = 6;
        while (i < len && section[i] == ' ')
            i++;
        bt_buf_puts(b, "route ");
        bt_buf_add(b, section + i, name_len(section + i, len - i));
    } else {
        bt_buf_add(b, section, len);
    }
}

/* The line of the first "key = value" of section in text (as inih reads it: blanks
 * around the key, = or : after it); 0 when not found. */
static int first_key_line(const char *text, const char *id, const char *key)
{
    struct bt_buf cur = {0};
    size_t klen = strlen(key);
    int line = 1, found = 0;
    for (const char *p = text; *p && !found; line++) {
        const char *q = p, *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        while (q < p + n && (*q == ' ' || *q == '\t'))
            q++;
        if (*q == '[') {
            const char *close = memchr(q, ']', (size_t)(p + n - q));
            if (close) {
                bt_buf_reset(&cur);
                section_id(&cur, q + 1, (size_t)(close - q - 1));
            }
        } else if (!strcmp(bt_buf_str(&cur), id) && (size_t)(p + n - q) > klen &&
                   !strncmp(q, key, klen)) {
            const char *e = q + klen;
            while (e < p + n && (*e == ' ' || *e == '\t'))
                e++;
            if (e < p + n && (*e == '=' || *e == ':'))
                found = line;
        }
        if (!nl)
            break;
        p = nl + 1;
    }
    bt_buf_free(&cur);
    return found;
}

/* A key set twice in one section is refused, naming both lines (the second is the
 * line inih reports): which of the two was meant is not bedtop's to guess. */
bool bt_ini_duplicate_key(struct parse_ctx *p, const char *section, const char *name)
{
    struct bt_buf id = {0};
    section_id(&id, section, strlen(section));
    size_t slen = id.len;
    bt_buf_putc(&id, '\x1f');
    bt_buf_puts(&id, name);
    struct ix_slot *sl = ix_find(&p->seen, id.buf, id.len);
    bool dup = sl && sl->key;
    if (dup && !strncmp(id.buf, "route ", 6)) {
        /* a [route NAME] written twice: check_routes says so, naming both sections */
        const struct ix_slot *rs = ix_find(ctx_sections(p), id.buf + 6, slen - 6);
        dup = !(rs && rs->key && rs->b);
    }
    if (dup) {
        id.buf[slen] = '\0';
        int first = first_key_line(p->text, id.buf, name);
        char at[48] = "";
        if (first)
            snprintf(at, sizeof at, " (first on line %d)", first);
        snprintf(p->err, sizeof p->err, "'%s' is set twice in [%s]%s; keep one", name, section, at);
    } else {
        size_t n = (size_t)p->nseen; /* doubled at powers of two */
        if ((n & (n - 1)) == 0)
            p->seen_keys = bt_xrealloc(p->seen_keys, (n ? 2 * n : 1) * sizeof *p->seen_keys);
        char *k = p->seen_keys[p->nseen++] = bt_xmalloc(id.len + 1);
        memcpy(k, id.buf, id.len + 1);
        ix_get(&p->seen, k, id.len);
    }
    bt_buf_free(&id);
    return dup;
}

/* The route of section "route NAME", added when new. */
int bt_ini_route_of_section(struct parse_ctx *p, const char *section, const char *rn)
{
    if (p->nnames && !strcmp(section, p->last_section))
        return p->last_route;
    size_t len = strlen(rn);
    struct ix_slot *sl = ix_find(&p->routes, rn, len);
    int i;
    if (sl && sl->key) {
        i = sl->a;
    } else {
        i = bt_config_add_route(p->c, rn);
        size_t n = (size_t)p->nnames; /* doubled at powers of two, as the routes */
        if ((n & (n - 1)) == 0)
            p->names = bt_xrealloc(p->names, (n ? 2 * n : 1) * sizeof *p->names);
        char *k = p->names[p->nnames++] = bt_xstrdup(rn);
        ix_get(&p->routes, k, len)->a = i;
    }
    bt_strlcpy(p->last_section, section, sizeof p->last_section);
    p->last_route = i;
    return i;
}

static bool check_routes_in(struct parse_ctx *p, const struct name_ix *sections, char *err,
                            size_t errlen)
{
    for (int i = 0; i < p->c->nroutes; i++) {
        struct bt_route *r = &p->c->routes[i];
        const struct ix_slot *sl = ix_find(sections, r->name, name_len(r->name, strlen(r->name)));
        r->line = sl && sl->key ? sl->a : 0;
        if (sl && sl->key && sl->b) {
            snprintf(err, errlen, "%s:%d: route '%s' defined twice", p->name, sl->b, r->name);
            return false;
        }
        if (!r->model[0]) {
            snprintf(err, errlen, "%s:%d: route '%s' has no model (add model = <model or inference-profile ID>)",
                     p->name, r->line, r->name);
            return false;
        }
        if (r->endpoint == BT_EP_RUNTIME &&
            (!isnan(r->quota[BT_Q_INPUT_TPM].value) || !isnan(r->quota[BT_Q_OUTPUT_TPM].value))) {
            snprintf(err, errlen, "%s:%d: route '%s': quota_input_tpm/quota_output_tpm apply to endpoint = mantle only",
                     p->name, r->line, r->name);
            return false;
        }
    }
    if (p->c->crit.pct == p->c->warn.pct && p->c->crit.value > p->c->warn.value) {
        snprintf(err, errlen, "%s: crit_headroom (%g) must not exceed warn_headroom (%g)", p->name,
                 p->c->crit.value, p->c->warn.value);
        return false;
    }
    return true;
}

bool bt_ini_check_routes(struct parse_ctx *p, char *err, size_t errlen)
{
    const struct name_ix *sections = ctx_sections(p);
    int toolong = p->sections_toolong;
    bool ok = !toolong;
    if (toolong)
        snprintf(err, errlen, "%s:%d: section name longer than %d characters (a route name "
                 "can have %d); shorten it", p->name, toolong, INI_SECTION_MAX, INI_SECTION_MAX - 6);
    return ok && check_routes_in(p, sections, err, errlen);
}

void bt_ini_parse_ctx_free(struct parse_ctx *p)
{
    ix_free(&p->sections);
    ix_free(&p->routes);
    ix_free(&p->seen);
    for (int i = 0; i < p->nseen; i++)
        free(p->seen_keys[i]);
    free(p->seen_keys);
    for (int i = 0; i < p->nnames; i++)
        free(p->names[i]);
    free(p->names);
}
