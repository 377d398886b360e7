/* A string -> int map (open addressing, FNV-1a): the lookups by model ID that make
 * discovery linear in routes (ListMetrics, Metrics Insights). Keys are not copied:
 * they must outlive the map. */
#ifndef BEDTOP_STRMAP_H
#define BEDTOP_STRMAP_H
#include <stddef.h>

struct bt_strmap {
    const char **key; /* NULL: an empty slot */
    int *val;
    size_t cap, n;    /* cap: a power of two, at least twice n */
};

void bt_strmap_init(struct bt_strmap *m, size_t expect);
void bt_strmap_free(struct bt_strmap *m);
void bt_strmap_clear(struct bt_strmap *m);
/* The value of key, or -1 when absent. */
int bt_strmap_get(const struct bt_strmap *m, const char *key);
/* The value's place for key, inserted as -1 when absent. */
int *bt_strmap_put(struct bt_strmap *m, const char *key);
#endif
