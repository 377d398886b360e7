/* A collector's JSON cache between runs, keyed by ARN (collectors/keycache.h). */
#include "collectors/keycache.h"

#include <stdlib.h>
#include <string.h>

#include "io/file.h"

cJSON *bt_keycache_load(const char *name)
{
    char path[1000];
    char *text = bt_cache_file(name, false, path, sizeof path)
                     ? bt_read_regular_file(path, 1 << 20, NULL)
                     : NULL;
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        root = cJSON_CreateObject();
    }
    return root;
}

bool bt_keycache_get(const char *name, const char *key, int64_t now, int64_t refresh,
                     bt_keycache_valid_fn valid, void *arg, int64_t *at)
{
    cJSON *root = bt_keycache_load(name);
    bool ok = valid(cJSON_GetObjectItemCaseSensitive(root, key), arg, at) && *at <= now &&
              now - *at < refresh;
    cJSON_Delete(root);
    return ok;
}

void bt_keycache_put(const char *name, const char *key, cJSON *entry, int64_t at,
                     int64_t refresh, int max, bt_keycache_valid_fn valid, void *arg)
{
    char path[1000];
    if (!bt_cache_file(name, true, path, sizeof path)) {
        cJSON_Delete(entry);
        return;
    }
    cJSON *root = bt_keycache_load(name);
    cJSON *e = root->child;
    int n = 0;
    while (e) {
        cJSON *next = e->next;
        int64_t t;
        if (!valid(e, arg, &t) || at - t >= refresh || !strcmp(e->string, key) || ++n >= max)
            cJSON_Delete(cJSON_DetachItemViaPointer(root, e));
        e = next;
    }
    cJSON_AddItemToObject(root, key, entry);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (text)
        bt_write_private_file(path, text, strlen(text), false);
    free(text);
}
