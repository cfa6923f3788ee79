/* monitor.h support functions, in a program linked with -lhookit. */
#include <stdio.h>
#include <pthread.h>
#include "monitor.h"
static void *th(void *a) {
    void *ret = __builtin_return_address(0);
    printf("thread: narrow=%d wide=%d\n", monitor_in_start_func_narrow(ret), monitor_in_start_func_wide(ret));
    return 0;
}
int main(void) {
    void *ret = __builtin_return_address(0);
    printf("main: narrow=%d wide=%d here=%d bottom=%d\n", monitor_in_start_func_narrow(ret), monitor_in_start_func_wide(ret),
           monitor_in_start_func_wide((void*)main), monitor_stack_bottom() != 0);
    printf("addr_main=%d num=%d\n", monitor_get_addr_main() == (void*)main, monitor_get_thread_num());
    pthread_t t; pthread_create(&t, 0, th, 0); pthread_join(t, 0);
    return 0;
}
