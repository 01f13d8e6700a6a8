"""A server-rendered app in Python (standard library only) that reads Gatehouse's session.

nginx (nginx.conf) puts this app and Gatehouse on one origin: the browser signs in on
Gatehouse's own page, and this app forwards the browser's cookies to Gatehouse's
GET /api/auth/session to learn who is signed in.
"""

import html
import json
import os
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, urlsplit

# Where Gatehouse listens, as this server reaches it (not through nginx).
GATEHOUSE_URL = os.environ.get("GATEHOUSE_URL", "http://127.0.0.1:3000")
PORT = int(os.environ.get("PORT", "8000"))


def session_from_gatehouse(cookie):
    """Gatehouse's answer for the browser's cookies, and the cookies it sets.

    The session is None, or {"user": {"id", "email", "name"}, "expires"}: None as soon as it
    was signed out or revoked, or the user disabled or removed. When the session's refresh is
    due (once a day), Gatehouse sets a new cookie: the caller passes it on to the browser."""
    request = urllib.request.Request(
        f"{GATEHOUSE_URL}/api/auth/session", headers={"Cookie": cookie or ""}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.load(response), response.headers.get_all("Set-Cookie") or []


def describe(session):
    if not session:
        return "Not signed in"
    user = session["user"]
    return f"Signed in as {user.get('name') or user['email']} (id {user['id']})"


def page(title, body):
    return f"""<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{html.escape(title)}</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto">
{body}
</body>
</html>"""


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        path = urlsplit(self.path).path
        session, self.cookies = session_from_gatehouse(self.headers.get("Cookie"))
        if path == "/":
            if session:
                links = (
                    '<p><a href="/dashboard">Dashboard</a></p>\n'
                    # Gatehouse's sign-out page: one button, then back here.
                    '<p><a href="/api/auth/signout?callbackUrl=%2F">Sign out</a></p>'
                )
            else:
                # Gatehouse's sign-in page, on this origin through nginx; back here after.
                links = '<p><a href="/api/auth/signin?callbackUrl=%2F">Sign in</a></p>'
            body = (
                "<h1>My app</h1>\n"
                f'<p>Asking Gatehouse: <span id="server-gatehouse">'
                f"{html.escape(describe(session))}</span></p>\n{links}"
            )
            self.answer(200, page("My app", body))
        elif path == "/dashboard":
            # A protected page: no session, no page; sign in, then come back here.
            if not session:
                self.send_response(303)
                self.send_cookies()
                self.send_header(
                    "Location", "/api/auth/signin?callbackUrl=" + quote("/dashboard", safe="")
                )
                self.end_headers()
                return
            name = session["user"].get("name") or session["user"]["email"]
            body = (
                "<h1>Dashboard</h1>\n"
                f'<p id="dashboard">Only for signed-in people: {html.escape(name)}, '
                "this page is yours.</p>\n"
                '<p><a href="/">Home</a></p>'
            )
            self.answer(200, page("Dashboard", body))
        else:
            self.answer(404, page("Not found", "<h1>Not found</h1>"))

    def answer(self, status, text):
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        # Pages that show a person's data are never cached.
        self.send_header("Cache-Control", "no-store")
        self.send_cookies()
        self.end_headers()
        self.wfile.write(body)

    def send_cookies(self):
        for cookie in self.cookies:
            self.send_header("Set-Cookie", cookie)


if __name__ == "__main__":
    print(f"My app on http://127.0.0.1:{PORT} (open it through nginx)", flush=True)
    ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
