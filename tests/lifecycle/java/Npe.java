public class Npe {
    static String field;
    static int length(String s) { return s.length(); }
    public static void main(String[] args) {
        int caught = 0;
        for (int i = 0; i < 20000; i++) {
            try { length(i % 2 == 0 ? field : "abc"); } catch (NullPointerException e) { caught++; }
        }
        System.out.println("caught " + caught + " NullPointerExceptions");
    }
}
