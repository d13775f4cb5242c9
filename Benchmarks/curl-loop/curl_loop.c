// The bare libcurl multi loop the transport is compared with (docs/benchmarks.md, issue 8 item 12):
// N POSTs of one body to one URL over HTTP/2 + TLS, with the transport's connection and stream
// settings (CURLPIPE_MULTIPLEX, MAX_HOST_CONNECTIONS, MAX_CONCURRENT_STREAMS, PIPEWAIT, NOSIGNAL,
// CURL_HTTP_VERSION_2TLS, POSTFIELDS without copy, reused easy handles, a header callback and a
// bounded write callback), at most connections × streams in flight. No queue, no thread hand-off:
// the floor of what libcurl costs.
//
// Usage: curl_loop URL REQUESTS CONNECTIONS STREAMS CA_FILE BODY_BYTES [HEADER...]
// The body is an APNs-shaped JSON payload of BODY_BYTES bytes; each HEADER ("name: value") is
// sent with every request (an emulator needs authorization and apns-topic).
// Prints: requests, seconds, requests/s, non-2xx or failed count, connections opened.
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t on_body(char *data, size_t size, size_t count, void *user) {
    (void)data; (void)user;
    return size * count;
}

static size_t on_header(char *data, size_t size, size_t count, void *user) {
    (void)user;
    size_t total = size * count;
    // The transport compares header names; do the same amount of work.
    if (total > 8 && strncasecmp(data, "apns-id:", 8) == 0) { volatile char c = data[8]; (void)c; }
    return total;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: %s URL REQUESTS CONNECTIONS STREAMS CA_FILE BODY_BYTES [HEADER...]\n", argv[0]);
        return 2;
    }
    const char *url = argv[1];
    long total = atol(argv[2]), connections = atol(argv[3]), streams = atol(argv[4]);
    const char *ca_file = argv[5];
    long body_bytes = atol(argv[6]);
    long window = connections * streams;
    // {"aps":{"alert":"xxx…"}}: the same bytes as the Swift loop and h2load's body file.
    const char *head = "{\"aps\":{\"alert\":\"", *tail = "\"}}";
    long frame = (long)(strlen(head) + strlen(tail));
    if (body_bytes < frame) body_bytes = frame;
    char *body = malloc(body_bytes + 1);
    memset(body, 'x', body_bytes);
    memcpy(body, head, strlen(head));
    memcpy(body + body_bytes - strlen(tail), tail, strlen(tail));

    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, connections);
    curl_multi_setopt(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, streams);
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, connections);

    struct curl_slist *headers = NULL;
    headers = curl_slist_append(headers, "content-type: application/json");
    headers = curl_slist_append(headers, "apns-push-type: alert");
    for (int i = 7; i < argc; i++) headers = curl_slist_append(headers, argv[i]);

    CURL **free_handles = calloc(window, sizeof(CURL *));
    long free_count = 0;
    for (long i = 0; i < window; i++) {
        CURL *easy = curl_easy_init();
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
        curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
        curl_easy_setopt(easy, CURLOPT_CAINFO, ca_file);
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(easy, CURLOPT_URL, url);
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_bytes);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 30000L);
        free_handles[free_count++] = easy;
    }

    long started = 0, done = 0, bad = 0, connects = 0;
    int running = 0;
    double begin = now();
    while (done < total) {
        while (started < total && free_count > 0) {
            CURL *easy = free_handles[--free_count];
            curl_easy_setopt(easy, CURLOPT_PRIVATE, (void *)(long)started);
            curl_multi_add_handle(multi, easy);
            started++;
        }
        curl_multi_perform(multi, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(multi, &left))) {
            if (msg->msg != CURLMSG_DONE) continue;
            CURL *easy = msg->easy_handle;
            long status = 0, opened = 0;
            curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
            curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &opened);
            connects += opened;
            if (msg->data.result != CURLE_OK || status < 200 || status > 299) bad++;
            curl_multi_remove_handle(multi, easy);
            free_handles[free_count++] = easy;
            done++;
        }
        // Wait only when no freed handle can start: polling here with the whole window just
        // freed idles for the full timeout (around a GOAWAY every transfer finishes in one round)
        // and can lock the loop into one window per second.
        if (done < total && !(started < total && free_count > 0)) curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    double seconds = now() - begin;
    printf("requests=%ld seconds=%.3f rate=%.0f bad=%ld connections=%ld\n", total, seconds, total / seconds, bad, connects);
    for (long i = 0; i < free_count; i++) curl_easy_cleanup(free_handles[i]);
    curl_multi_cleanup(multi);
    curl_slist_free_all(headers);
    free(body);
    return bad == 0 ? 0 : 1;
}
