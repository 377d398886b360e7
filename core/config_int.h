/* Shared by the parts of the INI parser (bedtop.conf(5)): core/config_ini.c (the
 * keys, inih's handler) and core/config_index.c (the section lines, the keys seen,
 * the routes by section); not for callers: they use core/config.h. */
#ifndef BEDTOP_CONFIG_INT_H
#define BEDTOP_CONFIG_INT_H
#include <stdbool.h>
#include <stddef.h>

#include "core/config.h"

/* ---- section lines: one pass over the text, looked up by name ----
 * Linear in the routes: a scan of the whole text per route for its "[route NAME]"
 * line, and a search of the routes per key, would be quadratic (20,000 routes). */

struct ix_slot {
    const char *key;         /* NULL: empty */
    size_t len;
    int a, b;                /* section lines: first and second line; routes: index */
};

/* An open-addressing hash of names to two ints; keys are not copied. */
struct name_ix {
    struct ix_slot *slot;
    size_t cap, n;           /* cap: a power of two, at most half full */
};

/* inih keeps at most 49 bytes of a section name (its MAX_SECTION, 50) and cuts
 * the rest silently: a longer [route NAME] would become another route's name. */
#define INI_SECTION_MAX 49

/* One parse of a config's text: inih's handler's user data. */
struct parse_ctx {
    struct bt_config *c;
    const char *text;
    const char *name;
    char err[1024];
    int errline_hint;
    struct name_ix routes;   /* route name -> index (keys: copies in names) */
    char **names;
    int nnames;
    char last_section[256];  /* the section of the previous key and its route */
    int last_route;
    struct name_ix seen;     /* "section\x1fkey" of every key set (keys: copies in seen_keys) */
    char **seen_keys;
    int nseen;
    struct name_ix sections; /* route name -> its section lines, built once (ctx_sections) */
    int sections_toolong;
    bool sections_built;
};

/* A key set twice in one section: true, and the error (both lines) in p->err; a new
 * key is remembered. */
bool bt_ini_duplicate_key(struct parse_ctx *p, const char *section, const char *name);
/* The index of the route of section "route NAME" (rn: NAME), added when new. */
int bt_ini_route_of_section(struct parse_ctx *p, const char *section, const char *rn);
/* After the text is read: a section name longer than inih reads, a route defined
 * twice or without a model, a runtime route with mantle's quotas, crit above warn;
 * false with the error in err. Sets each route's line. */
bool bt_ini_check_routes(struct parse_ctx *p, char *err, size_t errlen);
void bt_ini_parse_ctx_free(struct parse_ctx *p);
#endif
