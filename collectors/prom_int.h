/* Internal to the Prometheus parsers (prom_doc.c, prom_text.c, prom_json.c,
 * prom_api.c): how each adds to the document of collectors/promtext.h. Nothing
 * else includes this. */
#ifndef BEDTOP_PROM_INT_H
#define BEDTOP_PROM_INT_H
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collectors/promtext.h"

/* A series' identity (label order does not matter). */
uint64_t bt_promdoc_series_hash(const char *name, const struct bt_prom_label *l, int n);
/* Index of the series with that identity, -1 if none. */
int bt_promdoc_series_find(const struct bt_prom_doc *d, uint64_t h, const char *name,
                           const struct bt_prom_label *l, int n);
/* Appends a series; takes ownership of name and labels. Indexed (findable) unless
 * h is BT_PROMDOC_UNINDEXED. */
#define BT_PROMDOC_UNINDEXED 0
int bt_promdoc_series_add(struct bt_prom_doc *d, char *name, struct bt_prom_label *l, int n,
                          uint64_t h);
/* Appends a point of the series at index `of`: its name and labels are shared,
 * not copied (a Prometheus matrix repeats them for every point). */
int bt_promdoc_point_add(struct bt_prom_doc *d, int of);
void bt_promdoc_free_labels(struct bt_prom_label *l, int n);
int bt_promdoc_family_find(const struct bt_prom_doc *d, const char *name, size_t len);
int bt_promdoc_family_add(struct bt_prom_doc *d, const char *name, int line);

/* Metric-name characters ([a-zA-Z_:][a-zA-Z0-9_:]*). */
bool bt_promdoc_name_start(int c);
bool bt_promdoc_name_char(int c);
/* a (n bytes) equals b, ignoring case */
bool bt_promdoc_ieq(const char *a, size_t n, const char *b);
/* A sample value: a decimal float, or (allow_special) [+-]Inf, Infinity, NaN. */
bool bt_promdoc_value(const char *s, size_t n, bool allow_special, double *out);

/* JSON forms: writes the message into err and returns false. */
bool bt_promdoc_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* cJSON_ParseWithLength, or NULL with "line N: JSON syntax error" in err. */
cJSON *bt_promdoc_json(const char *text, size_t len, char *err, size_t errlen);
/* true (and err says so) once the document holds BT_PROM_MAX_SERIES series. */
bool bt_promdoc_full(struct bt_prom_doc *d, char *err, size_t errlen);
#endif
