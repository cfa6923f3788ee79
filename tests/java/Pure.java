// Java only (no native library): the JVMTI agent on its own.
public class Pure {
    static int f(int x) { return g(x) + 1; }
    static int g(int x) { return x * 3; }

    public static void main(String[] args) {
        int s = 0;
        for (int i = 0; i < 4; i++)
            s += f(i);
        System.out.println("pure " + s);
        if (args.length > 0 && args[0].equals("exit3"))
            System.exit(3);
    }
}
