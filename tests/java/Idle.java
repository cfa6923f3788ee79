// Java only, then idle: the JVMTI agent's process under live control
// (test_java.py).  Calls f 3 times, prints "ready", waits for a line on
// stdin (every thread of the program blocked), then calls f 2 times more.
public class Idle
{
    static int f(int x) { return x * 3 + 1; }

    public static void main(String[] args) throws Exception
    {
        int s = 0;
        for (int i = 0; i < 3; i++)
            s += f(i);
        System.out.println("ready");
        System.out.flush();
        System.in.read();
        for (int i = 0; i < 2; i++)
            s += f(i);
        System.out.println("idle " + s);
    }
}
