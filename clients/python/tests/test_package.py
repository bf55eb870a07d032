"""The package as installed: under `make test` it must come from the virtual
environment, not from the source tree, so a file left out of it fails."""

import os
import unittest

import akloc
import akloc.aio


class PackageTests(unittest.TestCase):
    def test_imported_from_the_installation(self) -> None:
        if os.environ.get("AKLOC_EXPECT_INSTALLED") != "1":
            self.skipTest("run from the source tree")
        self.assertIn("site-packages", akloc.__file__)
        self.assertNotIn(os.path.join("clients", "python", "src"), akloc.__file__)

    def test_typed_and_complete(self) -> None:
        directory = os.path.dirname(akloc.__file__)
        self.assertTrue(os.path.exists(os.path.join(directory, "py.typed")))
        for name in akloc.__all__:
            self.assertTrue(hasattr(akloc, name), name)
        self.assertEqual(akloc.DEFAULT_SOCKET, "/run/akloc/akloc.sock")

    def test_default_socket_follows_the_environment(self) -> None:
        saved = os.environ.get("AKLOC_SOCKET")
        try:
            os.environ["AKLOC_SOCKET"] = "/tmp/elsewhere.sock"
            self.assertEqual(akloc.default_socket(), "/tmp/elsewhere.sock")
            os.environ["AKLOC_SOCKET"] = ""
            self.assertEqual(akloc.default_socket(), "/run/akloc/akloc.sock")
        finally:
            if saved is None:
                os.environ.pop("AKLOC_SOCKET", None)
            else:
                os.environ["AKLOC_SOCKET"] = saved
