#include "core/json.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

char *bt_json_print(const cJSON *j, bool pretty)
{
    char *s = j ? (pretty ? cJSON_Print(j) : cJSON_PrintUnformatted(j)) : NULL;
    if (!s) {
        /* cJSON_Print fails only when its allocation does (or j is NULL, which is
         * what cJSON_Create* return when theirs did) */
        fputs("bedtop: out of memory\n", stderr);
        exit(3);
    }
    return s;
}

void bt_buf_json(struct bt_buf *b, const cJSON *j, bool pretty)
{
    char *s = bt_json_print(j, pretty);
    bt_buf_puts(b, s);
    cJSON_free(s);
}

/* Blocks of at least 256 kB, each bump-allocated; a chain freed whole. */
struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    alignas(max_align_t) unsigned char data[];
};
struct bt_json_arena {
    struct arena_block *head;
};

static struct bt_json_arena *arena_now; /* the arena the hooks allocate from */

static void *arena_malloc(size_t n)
{
    struct bt_json_arena *a = arena_now;
    size_t al = alignof(max_align_t);
    n = (n + al - 1) / al * al;
    struct arena_block *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > (256u << 10) ? n : (256u << 10);
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL; /* cJSON says the parse failed: the caller's out-of-memory rule */
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

static void arena_free(void *p)
{
    (void)p; /* the arena is freed whole */
}

struct bt_json_arena *bt_json_arena_begin(void)
{
    struct bt_json_arena *a = bt_xcalloc(1, sizeof *a);
    cJSON_Hooks h = {arena_malloc, arena_free};
    arena_now = a;
    cJSON_InitHooks(&h);
    return a;
}

void bt_json_arena_end(void)
{
    cJSON_InitHooks(NULL);
    arena_now = NULL;
}

cJSON *bt_json_parse_arena(const char *text, size_t len, struct bt_json_arena **arena)
{
    struct bt_json_arena *a = bt_json_arena_begin();
    cJSON *root = cJSON_ParseWithLength(text, len);
    bt_json_arena_end();
    if (!root) {
        bt_json_arena_free(a);
        a = NULL;
    }
    *arena = a;
    return root;
}

void bt_json_arena_free(struct bt_json_arena *a)
{
    if (!a)
        return;
    for (struct arena_block *b = a->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(a);
}
