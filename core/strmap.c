/* String -> int map (core/strmap.h). */
#include "core/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

void bt_strmap_init(struct bt_strmap *m, size_t expect)
{
    size_t cap = 16;
    while (cap < 2 * expect)
        cap *= 2;
    m->cap = cap;
    m->n = 0;
    m->key = bt_xcalloc(cap, sizeof *m->key);
    m->val = bt_xcalloc(cap, sizeof *m->val);
}

void bt_strmap_free(struct bt_strmap *m)
{
    free(m->key);
    free(m->val);
    *m = (struct bt_strmap){0};
}

void bt_strmap_clear(struct bt_strmap *m)
{
    if (m->key)
        memset(m->key, 0, m->cap * sizeof *m->key);
    m->n = 0;
}

static size_t find(const struct bt_strmap *m, const char *key)
{
    size_t i = (size_t)bt_str_hash(key) & (m->cap - 1);
    while (m->key[i] && strcmp(m->key[i], key) != 0)
        i = (i + 1) & (m->cap - 1);
    return i;
}

int bt_strmap_get(const struct bt_strmap *m, const char *key)
{
    if (!m->cap)
        return -1;
    size_t i = find(m, key);
    return m->key[i] ? m->val[i] : -1;
}

int *bt_strmap_put(struct bt_strmap *m, const char *key)
{
    if (!m->cap)
        bt_strmap_init(m, 8);
    if (2 * (m->n + 1) > m->cap) { /* grow: rehash every key */
        struct bt_strmap g;
        bt_strmap_init(&g, m->n + 1);
        for (size_t k = 0; k < m->cap; k++)
            if (m->key[k]) {
                size_t i = find(&g, m->key[k]);
                g.key[i] = m->key[k];
                g.val[i] = m->val[k];
                g.n++;
            }
        bt_strmap_free(m);
        *m = g;
    }
    size_t i = find(m, key);
    if (!m->key[i]) {
        m->key[i] = key;
        m->val[i] = -1;
        m->n++;
    }
    return &m->val[i];
}
