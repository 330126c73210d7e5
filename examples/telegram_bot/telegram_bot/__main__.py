from telegram_bot.local_app import main

main()
