/* A string -> int map (open addressing, FNV-1a): the lookups by model ID that make
 * discovery linear in routes (ListMetrics, Metrics Insights). Keys are not copied:
 * they must outlive the map. */
#ifndef BEDTOP_STRMAP_H
#define BEDTOP_STRMAP_H
#include <stddef.h>
#include <stdint.h>

struct bt_strmap {
    const char **key; /* NULL: an empty slot */
    int *val;
    size_t cap, n;    /* cap: a power of two, at least twice n */
};

/* The hash of a NUL-terminated string that core's tables key by (FNV-1a's multiply,
 * from a fixed odd seed, not FNV's published offset basis; nothing stores it, so the
 * seed only orders slots). The map below, the per-series stores and the recorder's
 * series index use it. */
static inline uint64_t bt_str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void bt_strmap_init(struct bt_strmap *m, size_t expect);
void bt_strmap_free(struct bt_strmap *m);
void bt_strmap_clear(struct bt_strmap *m);
/* The value of key, or -1 when absent. */
int bt_strmap_get(const struct bt_strmap *m, const char *key);
/* The value's place for key, inserted as -1 when absent. */
int *bt_strmap_put(struct bt_strmap *m, const char *key);
#endif
