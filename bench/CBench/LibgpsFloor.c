#define _GNU_SOURCE
#include "CBench.h"

#include <gps.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

// The floor with libgps as its reader (bench/NOTES.md, "CPU per epoch"): what
// any program pays that reads gpsd through libgps, as issue 19 keeps aklocd
// doing. The same fan-out as `akloc-bench floor` (the first TPV of each epoch,
// gpsd's own line, to every subscriber) with libgps's canonical loop in place
// of the floor's byte scan: on each wake-up gps_read() until gps_waiting()
// says nothing is buffered. No validation, no merge, no policy.
int cbench_libgps_floor(int listener, const char *port) {
    static struct gps_data_t gps;
    static int subscribers[CBENCH_MAX_EVENTS];
    // gpsd's longest JSON object (GPS_JSON_RESPONSE_MAX, not in its public headers) and a newline.
    static char line[10240 + 2];
    int count = 0;
    timespec_t last = {0, 0};
    if (gps_open("127.0.0.1", port, &gps) != 0) return 69;
    if (gps_stream(&gps, WATCH_ENABLE | WATCH_JSON, NULL) != 0) return 69;
    static const char hello[] = "{\"class\":\"HELLO\"}\n";
    struct pollfd polled[2] = {{.fd = listener, .events = POLLIN}, {.fd = gps.gps_fd, .events = POLLIN}};
    for (;;) {
        if (poll(polled, 2, -1) < 0) continue;
        if (polled[0].revents) {
            int client;
            while ((client = cbench_accept_nonblocking(listener)) >= 0) {
                if (count == CBENCH_MAX_EVENTS) {
                    close(client);
                    continue;
                }
                (void)!write(client, hello, sizeof hello - 1);
                subscribers[count++] = client;
            }
        }
        if (!polled[1].revents) continue;
        do {
            int read = gps_read(&gps, line, (int)sizeof line - 1);
            if (read < 0) return 0;
            if (read == 0) break;
            // libgps stamps the class it parsed in `set`: a TPV with a time.
            if (!(gps.set & TIME_SET) || strncmp(line, "{\"class\":\"TPV\"", 14) != 0) continue;
            if (gps.fix.time.tv_sec == last.tv_sec && gps.fix.time.tv_nsec == last.tv_nsec) continue;
            last = gps.fix.time;
            size_t length = strlen(line);
            if (length == 0 || line[length - 1] != '\n') line[length++] = '\n';
            for (int i = 0; i < count; i++) (void)!write(subscribers[i], line, length);
        } while (gps_waiting(&gps, 0));
    }
}
