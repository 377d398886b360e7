/* cJSON's printers with bedtop's out-of-memory rule (bt_xmalloc's: say so, exit 3),
 * so no caller meets a NULL from cJSON_Print. What cJSON allocates is released with
 * cJSON_free, never free: cJSON may run on other allocation hooks. */
#ifndef BEDTOP_JSON_H
#define BEDTOP_JSON_H
#include <cjson/cJSON.h>
#include <stdbool.h>

#include "core/util.h"

/* j printed (pretty: cJSON_Print's layout, else one line); never NULL. Release
 * with cJSON_free. */
/* o[k] = v rounded to `decimals` (bt_round_to), null when v is NaN or infinite: unknown
 * is null, never NaN or 0. */
void bt_json_add_round(cJSON *o, const char *k, double v, int decimals);
/* o[k] = v, null when v is NULL or empty. */
void bt_json_add_str(cJSON *o, const char *k, const char *v);
/* o[k] = the instant t as ISO 8601 UTC ("2026-11-29T10:00:00Z"), null when t is 0
 * (never: not a time of 1970). */
void bt_json_add_time(cJSON *o, const char *k, int64_t t);
char *bt_json_print(const cJSON *j, bool pretty);
/* Appends j, printed, to b. */
void bt_buf_json(struct bt_buf *b, const cJSON *j, bool pretty);
/* Appends j to b as cJSON_PrintUnformatted prints it, byte for byte, without the
 * intermediate string: a number that is its own value rounded to at most 6 decimals
 * (what bedtop's figures are) is written from its digits, not through cJSON's
 * %1.15g, sscanf and %1.17g round trip (export prints millions). */
void bt_buf_json_compact(struct bt_buf *b, const cJSON *j);
/* The same for cJSON_Print's layout, as j prints inside a tree where it sits at
 * `depth` (0: j is the tree), so a tree can be printed a piece at a time: an
 * array's items at depth + 1, an object's members at depth + 1 (what
 * bt_buf_json_member prints, one a line). */
void bt_buf_json_pretty(struct bt_buf *b, const cJSON *j, int depth);
/* Member m of an object that sits at depth - 1, as cJSON_Print prints it: depth
 * tabs, its key, ':', a tab and its value (no comma, no newline). With piece, b
 * is handed to piece->done after each item of every array or object inside m,
 * the text so far being whole JSON tokens (a big member written as it goes). */
struct bt_json_piece {
    void (*done)(void *ctx, struct bt_buf *b);
    void *ctx;
};
void bt_buf_json_member(struct bt_buf *b, const cJSON *m, int depth, const struct bt_json_piece *piece);

/* A writer of one JSON object, either onto a cJSON tree (bt_jw_tree: members added
 * to an object that exists) or as the text bt_buf_json_compact would print for that
 * tree, sanitised as bt_san_json_text (core/sanitize.h) has it, byte for byte,
 * written straight into a buffer (bt_jw_text: no tree, no second pass; export
 * writes millions of members). k is the member's key, NULL for an array's item.
 * Each call does what the cJSON_Add* call of its name does; bt_jw_str with a NULL
 * value adds nothing, as cJSON_AddStringToObject. */
#define BT_JW_DEPTH 16
/* The ISO texts of the last instants a writer wrote, by minute: a caller that writes the
 * same few instants for many rows (export) keeps one and hands it to each row's writer
 * (bt_jw.times), so core keeps no cache of its own. */
struct bt_jw_times {
    struct {
        int64_t t;
        char iso[32];
    } seen[8];
};
struct bt_jw {
    struct bt_buf *b;           /* text: appended to; NULL: a tree */
    struct bt_jw_times *times;  /* bt_jw_time's cache (NULL: none); the caller's */
    cJSON *open[BT_JW_DEPTH];   /* tree: the open object or array at each depth */
    bool more[BT_JW_DEPTH];     /* text: something written at that depth already */
    char shut[BT_JW_DEPTH];     /* text: what closes the object or array at that depth */
    int depth;
    int lost; /* opened deeper than BT_JW_DEPTH: what is written there is dropped */
};
/* members go into the object o */
void bt_jw_tree(struct bt_jw *w, cJSON *o);
/* '{' appended to b, members after it; bt_jw_end writes the '}' */
void bt_jw_text(struct bt_jw *w, struct bt_buf *b);
void bt_jw_obj(struct bt_jw *w, const char *k);
void bt_jw_arr(struct bt_jw *w, const char *k);
void bt_jw_end(struct bt_jw *w); /* closes the innermost bt_jw_obj or bt_jw_arr */
void bt_jw_num(struct bt_jw *w, const char *k, double v);
void bt_jw_str(struct bt_jw *w, const char *k, const char *v);
void bt_jw_null(struct bt_jw *w, const char *k);
void bt_jw_bool(struct bt_jw *w, const char *k, bool v);
/* bt_json_add_round, bt_json_add_str and bt_json_add_time through a writer */
void bt_jw_round(struct bt_jw *w, const char *k, double v, int decimals);
void bt_jw_str_or_null(struct bt_jw *w, const char *k, const char *v);
void bt_jw_time(struct bt_jw *w, const char *k, int64_t t);

/* A parse whose tree lives in one arena: while cJSON parses, its allocation hooks
 * take blocks from the arena and free nothing, and cJSON's default hooks are set
 * again after (bedtop runs cJSON on its defaults). A GetMetricData page of 500
 * results is some 60,000 nodes: as many malloc and free calls were half of reading
 * it. The tree is read, never changed; release it with bt_json_arena_free (never
 * cJSON_Delete). NULL when text is not JSON (the arena freed). */
struct bt_json_arena;
cJSON *bt_json_parse_arena(const char *text, size_t len, struct bt_json_arena **arena);
void bt_json_arena_free(struct bt_json_arena *a);
/* Releases everything a made at once and keeps it for more (one block kept): a tree
 * built, printed and dropped again and again reuses the same memory. */
void bt_json_arena_reset(struct bt_json_arena *a);
/* The same around any cJSON work: between begin and end everything cJSON allocates
 * (trees, printed text) comes from the arena and cJSON_Delete/cJSON_free release
 * nothing; after end, what was made stays readable until bt_json_arena_free. Not
 * nested; nothing made inside may outlive the arena. */
struct bt_json_arena *bt_json_arena_begin(void);
void bt_json_arena_end(void);
#endif
