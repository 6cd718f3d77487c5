"""The app's screens: home, debugger, help, and the modals (quit, traceback)."""
